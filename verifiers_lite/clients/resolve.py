"""Turn whatever the user passed as ``client`` into model clients the scheduler can use.

A stock ``openai.AsyncOpenAI`` runs on the lean aiohttp transport (:class:`ChatClient`) whenever
everything it was configured with can be honoured there: endpoint, key, organization/project,
custom headers, timeout, ``max_retries`` and proxy environment variables. Anything else (a custom
``http_client``, ``default_query``, a key provider, a subclass such as Azure's) keeps the SDK
path. Wrapping the client in :class:`OpenAIClientAdapter` always keeps the SDK path.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from verifiers_lite.clients.cache import CachedClient, CacheMeter, ResponseCache
from verifiers_lite.clients.http import ChatClient
from verifiers_lite.clients.openai_adapter import OpenAIClientAdapter
from verifiers_lite.clients.openai_settings import openai_settings, read_timeout
from verifiers_lite.core.model_client import ModelClient, ModelClientLike, OpenAIClientLike

if TYPE_CHECKING:
    import openai

# One lean client per user client, so every rollout and every evaluate call on it shares one
# connection pool. Keyed on the settings too: a client whose key or URL was changed gets a new one.
_lean: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], ChatClient]] = (
    weakref.WeakKeyDictionary()
)


def as_model_client(client: ModelClientLike) -> ModelClient:
    """Accept an ``AsyncOpenAI``-like client, a :class:`ModelClient`, or a base URL string."""
    if isinstance(client, str):
        return ChatClient(client)
    completions = getattr(getattr(client, "chat", None), "completions", None)
    if completions is not None and hasattr(completions, "create"):
        sdk = cast(OpenAIClientLike, client)  # it answers chat.completions.create
        return lean_client(sdk) or OpenAIClientAdapter(sdk)
    if callable(getattr(client, "chat", None)):
        return cast(ModelClient, client)
    raise TypeError(
        "client must be an openai.AsyncOpenAI, a verifiers_lite ChatClient (or any object with an "
        f"async chat(model, messages, sampling_args, tools) method), or a base URL; got {type(client).__name__}"
    )


def as_model_clients(client: ModelClientLike) -> list[ModelClient]:
    """Like :func:`as_model_client`, also accepting a list of endpoints (for group routing)."""
    if isinstance(client, Sequence) and not isinstance(client, str):
        if not client:
            raise ValueError("client list is empty: give at least one endpoint")
        return [as_model_client(c) for c in client]
    return [as_model_client(client)]


def lean_client(client: OpenAIClientLike) -> ChatClient | None:
    """The :class:`ChatClient` standing in for a stock ``AsyncOpenAI``, or None when the client
    carries a setting the lean transport cannot honour (then the SDK itself is used)."""
    if sdk_only_reason(client) is not None:
        return None
    # sdk_only_reason found a stock openai.AsyncOpenAI: the SDK's own type from here
    settings = openai_settings(cast("openai.AsyncOpenAI", client))
    key = tuple(sorted((k, repr(v)) for k, v in settings.items()))
    try:
        cached = _lean.get(client)
    except TypeError:  # not weak-referenceable
        cached = None
    if cached is not None and cached[0] == key:
        return cached[1]
    lean = ChatClient(**settings)
    with contextlib.suppress(TypeError):  # not weak-referenceable: built per call
        _lean[client] = (key, lean)
    return lean


def sdk_only_reason(client: object) -> str | None:
    """Why ``client`` must keep the SDK path (a setting the lean transport cannot honour), or
    None when :class:`ChatClient` can do exactly what it would do."""
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a dependency
        return "openai is not installed"
    if type(client) is not openai.AsyncOpenAI:  # subclasses (Azure...) sign requests differently
        return f"{type(client).__name__} is not a stock openai.AsyncOpenAI"
    attrs = vars(client)
    if type(attrs.get("_client")).__name__ != "AsyncHttpxClientWrapper":
        return "it was given its own http_client"
    if attrs.get("_custom_query"):
        return "it has default_query"
    if attrs.get("_api_key_provider") or not isinstance(client.api_key, (str, type(None))):
        return "its api_key is a provider function"
    if attrs.get("workload_identity") or attrs.get("_ambient_authorizations"):
        return "it authenticates by workload identity"
    if attrs.get("_provider") is not None:
        return "it targets a provider preset"
    if read_timeout(client.timeout) is None:
        return "it has no timeout"
    return None


def attach_cache(client: ModelClientLike, cache: Any) -> tuple[Any, CacheMeter | None]:
    """``client`` (one or a list) with every endpoint answering through ``cache``, and a meter
    of the run's hits and misses. Without ``cache``, clients that cache on their own
    (``ChatClient(cache=...)``) are still metered; None when nothing caches."""
    store = ResponseCache.coerce(cache)
    models = as_model_clients(client)
    # ChatClient(cache=...)
    own = [c.response_cache if isinstance(c, ChatClient) else None for c in models]
    if store is None:
        caching = [c for c in own if c is not None]
        return client, (CacheMeter(caching, str(caching[0].cache.path)) if caching else None)
    wrapped = [
        o if o is not None else CachedClient(c, store) for c, o in zip(models, own, strict=True)
    ]
    many = isinstance(client, (list, tuple))
    return (wrapped if many else wrapped[0]), CacheMeter(list(wrapped), str(store.path))
