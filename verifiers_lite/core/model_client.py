"""The one interface every model backend speaks: ``chat()`` returning a :class:`ChatResponse`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from verifiers_lite.core.messages import Message


@dataclass(slots=True)
class TurnUsage:
    """Token counts the backend reported for one turn (0 when it does not report them); a
    row's ``usage`` (:class:`verifiers_lite.core.records.Usage`) sums them over its turns."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0  #: of the completion tokens, those spent reasoning (when reported)
    cached_prompt_tokens: int = 0  #: of the prompt tokens, those served from the provider's cache
    #: the other numeric fields of the server's ``usage`` (nested ones named with dots)
    extra: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class ChatResponse:
    """One assistant turn.

    ``message`` is an OpenAI-style assistant message dict (``role``, ``content``, when the
    model called tools ``tool_calls``, and when it reasoned ``reasoning_content``). Token-level
    backends also fill ``prompt_ids``,
    ``completion_ids`` and ``completion_logprobs`` so training data can be exported verbatim.
    ``system_fingerprint`` is the server's build identifier when it returns one; ``model`` the
    model id it says answered.
    """

    message: Message  #: the assistant message (above)
    #: why the model stopped (``stop``, ``length``, ``tool_calls``...)
    finish_reason: str | None = "stop"
    usage: TurnUsage = field(default_factory=TurnUsage)  #: the call's token counts
    prompt_ids: list[int] | None = None  #: the prompt's token ids (token-level backends)
    completion_ids: list[int] | None = None  #: the answer's token ids (token-level backends)
    #: each answer token's log-probability (token-level backends)
    completion_logprobs: list[float] | None = None
    system_fingerprint: str | None = None  #: the serving build, when the server reports one
    response_id: str | None = None  #: the completion's ``id``, when the server gave one
    created: int | None = None  #: the completion's ``created`` (epoch seconds), when given
    model: str | None = None  #: the model id the server says answered (its response's ``model``)

    @property
    def content(self) -> str:
        return self.message.get("content") or ""

    @property
    def reasoning(self) -> str | None:
        """The turn's reasoning (``message["reasoning_content"]``), None when it gave none."""
        value = self.message.get("reasoning_content")
        return value if isinstance(value, str) and value else None

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        return self.message.get("tool_calls") or []


@runtime_checkable
class ModelClient(Protocol):
    """Anything that can produce one assistant turn for a conversation."""

    async def chat(
        self,
        model: str,
        messages: list[Message],
        sampling_args: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatResponse: ...


class OpenAIClientLike(Protocol):
    """An ``openai.AsyncOpenAI``-like client: it answers ``client.chat.completions.create(...)``."""

    @property
    def chat(self) -> Any: ...


_Endpoint = ModelClient | OpenAIClientLike | str

ModelClientLike = _Endpoint | Sequence[_Endpoint]
"""What a run takes as its model client: a :class:`ModelClient`, an ``openai.AsyncOpenAI``-like
client, a base URL, or a list of those (one per endpoint, rollouts spread over them)."""


def text_only_model(client: ModelClientLike) -> str | None:
    """How to name the model behind ``client`` when it is known to read text only (the client
    declares ``text_only``: True, or the model's name); None when it may take any content."""
    declared = getattr(client, "text_only", False)
    if not declared:
        return None
    return declared if isinstance(declared, str) else f"the model behind {client!r}"
