"""Model access: a lean HTTP client, the OpenAI adapter, routing, the response cache, scripted
clients and the one-turn chat APIs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

# The public names are the imports of the TYPE_CHECKING block below, each imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
# The model-client protocol and its response live in core (``vf.ModelClient``, ``vf.ChatResponse``);
# a turn's token counts were called Usage, the name of a row's summed usage too.
_MOVED: dict[str, str] = {
    "ChatResponse": "verifiers_lite.core.model_client",
    "ModelClient": "verifiers_lite.core.model_client",
    "TurnUsage": "verifiers_lite.core.model_client",
    "Usage": "verifiers_lite.core.model_client:TurnUsage",
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), moved=_MOVED)

if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.clients.cache import CachedClient, ResponseCache
    from verifiers_lite.clients.chat_api import ChatAPI, ChatAPIClient, OpenAIChatAPI
    from verifiers_lite.clients.group import ClientGroup
    from verifiers_lite.clients.http import ChatClient
    from verifiers_lite.clients.openai_adapter import OpenAIClientAdapter
    from verifiers_lite.clients.resolve import as_model_client, as_model_clients
    from verifiers_lite.clients.retry import RetryPolicy
    from verifiers_lite.clients.routing import EndpointRouter, LimitedClient
    from verifiers_lite.clients.scripted import ScriptedClient
