"""Use a user's ``openai.AsyncOpenAI`` (or anything shaped like it) as a model client."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from verifiers_lite.clients.http import parse_chat_completion
from verifiers_lite.core.errors import ModelAPIError
from verifiers_lite.core.messages import Message
from verifiers_lite.core.model_client import ChatResponse, OpenAIClientLike

# What asyncio/httpx raise when a connection pool made on one event loop is used on another.
_LOOP_ERRORS = (
    "bound to a different event loop",
    "attached to a different loop",
    "Event loop is closed",
)


class _LoopClients:
    """One user client's stand-ins per event loop. The client itself serves the loop it first
    worked on; any other loop (``asyncio.run`` after ``evaluate_sync``, or the reverse) gets a
    copy with a fresh connection pool, since pools cannot cross loops."""

    def __init__(self) -> None:
        self.home: weakref.ref[asyncio.AbstractEventLoop] | None = None
        self.copies: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )


_registry: weakref.WeakKeyDictionary[Any, _LoopClients] = weakref.WeakKeyDictionary()


def _copy_for_loop(client: Any) -> Any:
    # Any: the adapter takes anything shaped like an AsyncOpenAI, and only the SDK's own client
    # has copy(http_client=...); a stand-in without it fails here as the SDK path would.
    import openai

    return client.copy(http_client=openai.DefaultAsyncHttpxClient())


def openai_error(exc: BaseException) -> ModelAPIError | None:
    """The library's error for an ``openai`` SDK failure (sync or async client), or None when
    ``exc`` is not one: the one mapping of the SDK's exceptions onto the error categories."""
    import openai

    if isinstance(exc, openai.RateLimitError):
        return ModelAPIError(str(exc), category="model_rate_limited", status=429)
    if isinstance(exc, openai.APITimeoutError):  # before APIConnectionError, its base class
        return ModelAPIError(str(exc), category="model_timeout")
    if isinstance(exc, openai.APIConnectionError):
        return ModelAPIError(str(exc), category="model_connection")
    if isinstance(exc, openai.APIStatusError):
        return ModelAPIError(str(exc), category="model_http_error", status=exc.status_code)
    return None


class OpenAIClientAdapter:
    """Adapts ``client.chat.completions.create`` to :class:`ModelClient`: the SDK path.

    A bare ``AsyncOpenAI`` passed to evaluate/generate runs on the lean :class:`ChatClient`
    when its settings allow; wrap it in this adapter to keep the SDK's own transport (its
    ``http_client``, retries and response types) regardless.

    The OpenAI client keeps its own retry policy (``max_retries`` on the client); errors that
    survive it are mapped onto the library's error categories. The client works from any event
    loop: on a loop other than the one it first worked on, a copy with its own connection pool
    is used (same endpoint, key, headers, timeout, retries).

    Args:
        client: an ``openai.AsyncOpenAI`` (or anything with ``chat.completions.create``).
    """

    def __init__(self, client: OpenAIClientLike) -> None:
        self.client = client
        self.base_url = str(getattr(client, "base_url", "")).rstrip("/")
        self.api_key = getattr(client, "api_key", None)

    def __repr__(self) -> str:
        return f"OpenAIClientAdapter({self.base_url!r})"

    async def chat(
        self,
        model: str,
        messages: list[Message],
        sampling_args: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatResponse:
        import openai

        kwargs: dict[str, Any] = dict(sampling_args or {})
        if tools:
            kwargs["tools"] = tools
        try:
            completion = await self._create(model=model, messages=messages, **kwargs)
        except openai.OpenAIError as exc:
            raise (openai_error(exc) or exc) from exc
        return parse_chat_completion(completion.model_dump_json(), self.base_url)

    async def _create(self, **kwargs: Any) -> Any:
        """``chat.completions.create`` on a client usable from the running loop."""
        loop = asyncio.get_running_loop()
        try:
            slot = _registry.setdefault(self.client, _LoopClients())
        except TypeError:  # not weak-referenceable: use it as it is
            return await self.client.chat.completions.create(**kwargs)
        home = slot.home() if slot.home is not None else None
        copy = slot.copies.get(loop)
        if copy is not None:
            return await copy.chat.completions.create(**kwargs)
        if home is None or home is loop:
            try:
                result = await self.client.chat.completions.create(**kwargs)
            except RuntimeError as exc:
                if not any(text in str(exc) for text in _LOOP_ERRORS):
                    raise
                # Bound to a loop we never saw (the user's own code used it first).
            else:
                if home is None:
                    slot.home = weakref.ref(loop)
                return result
        copy = slot.copies.setdefault(loop, _copy_for_loop(self.client))
        return await copy.chat.completions.create(**kwargs)
