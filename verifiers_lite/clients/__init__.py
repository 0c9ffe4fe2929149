"""Model access: the ModelClient interface, a lean HTTP client, the OpenAI adapter, routing."""

from verifiers_lite.clients.base import ChatResponse, ModelClient, Usage
from verifiers_lite.clients.http import ChatClient
from verifiers_lite.clients.openai_adapter import OpenAIClientAdapter
from verifiers_lite.clients.resolve import as_model_client, as_model_clients
from verifiers_lite.clients.retry import RetryPolicy
from verifiers_lite.clients.routing import EndpointRouter, LimitedClient

__all__ = [
    "ChatClient",
    "ChatResponse",
    "EndpointRouter",
    "LimitedClient",
    "ModelClient",
    "OpenAIClientAdapter",
    "RetryPolicy",
    "Usage",
    "as_model_client",
    "as_model_clients",
]
