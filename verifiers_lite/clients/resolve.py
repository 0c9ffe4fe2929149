"""Turn whatever the user passed as ``client`` into model clients the scheduler can use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verifiers_lite.clients.base import ModelClient
from verifiers_lite.clients.http import ChatClient
from verifiers_lite.clients.openai_adapter import OpenAIClientAdapter


def as_model_client(client: Any) -> ModelClient:
    """Accept an ``AsyncOpenAI``-like client, a :class:`ModelClient`, or a base URL string."""
    if isinstance(client, str):
        return ChatClient(client)
    completions = getattr(getattr(client, "chat", None), "completions", None)
    if completions is not None and hasattr(completions, "create"):
        return OpenAIClientAdapter(client)
    if callable(getattr(client, "chat", None)):
        return client
    raise TypeError(
        "client must be an openai.AsyncOpenAI, a verifiers_lite ChatClient (or any object with an "
        f"async chat(model, messages, sampling_args, tools) method), or a base URL; got {type(client).__name__}"
    )


def as_model_clients(client: Any) -> list[ModelClient]:
    """Like :func:`as_model_client`, also accepting a list of endpoints (for group routing)."""
    if isinstance(client, Sequence) and not isinstance(client, str):
        if not client:
            raise ValueError("client list is empty: give at least one endpoint")
        return [as_model_client(c) for c in client]
    return [as_model_client(client)]
