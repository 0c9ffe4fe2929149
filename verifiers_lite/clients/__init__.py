"""Model access: the ModelClient interface, a lean HTTP client, the OpenAI adapter, routing."""

from verifiers_lite.clients.http import ChatClient
from verifiers_lite.clients.openai_adapter import OpenAIClientAdapter
from verifiers_lite.clients.resolve import as_model_client, as_model_clients
from verifiers_lite.clients.retry import RetryPolicy
from verifiers_lite.clients.routing import EndpointRouter, LimitedClient
from verifiers_lite.core.model_client import ChatResponse, ModelClient, TurnUsage

__all__ = [
    "ChatClient",
    "ChatResponse",
    "EndpointRouter",
    "LimitedClient",
    "ModelClient",
    "OpenAIClientAdapter",
    "RetryPolicy",
    "TurnUsage",
    "as_model_client",
    "as_model_clients",
]


def __getattr__(name: str) -> object:
    # The turn's token counts were called Usage, the name of a row's summed usage too.
    if name == "Usage":
        import warnings

        warnings.warn(
            "verifiers_lite.clients.Usage is now TurnUsage (verifiers_lite.Usage is a row's usage)",
            DeprecationWarning,
            stacklevel=2,
        )
        return TurnUsage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
