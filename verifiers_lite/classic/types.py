"""The names classic code imports from ``verifiers.types``: the message models and type aliases.

Messages are pydantic models as in verifiers 0.3.1, with its observable behaviour: ``msg.role``
and ``msg["role"]`` (a missing field is an ``AttributeError`` either way), ``msg.get(key)``,
``key in msg``, ``model_dump()`` (unset optional fields as None), ``str(msg)`` the model's
fields, equality with a mapping of the same fields; a message is not a ``dict`` and not
JSON-serialisable. Unknown fields are kept (``extra="allow"``). Rows and requests get plain
OpenAI-format dicts again (:mod:`verifiers_lite.classic.messages`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict


class ClassicModel(BaseModel):
    """A pydantic model with item access, ``get`` and mapping equality (0.3.1's message base)."""

    model_config = ConfigDict(extra="allow")

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self, key, value)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and hasattr(self, key)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self.model_dump() == dict(other)
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # mutable, as pydantic models are


class TextMessage(ClassicModel):
    role: Literal["text"] = "text"
    content: str


class TextContentPart(ClassicModel):
    type: Literal["text"] = "text"
    text: str


class ImageUrlSource(ClassicModel):
    url: str


class ImageUrlContentPart(ClassicModel):
    type: Literal["image_url"] = "image_url"
    image_url: ImageUrlSource


class InputAudioSource(ClassicModel):
    data: str
    format: str


class InputAudioContentPart(ClassicModel):
    type: Literal["input_audio"] = "input_audio"
    input_audio: InputAudioSource


class GenericContentPart(ClassicModel):
    type: str


ContentPart: TypeAlias = (
    TextContentPart
    | ImageUrlContentPart
    | InputAudioContentPart
    | GenericContentPart
    | dict[str, Any]
)
MessageContent: TypeAlias = str | list[ContentPart]


class SystemMessage(ClassicModel):
    role: Literal["system"] = "system"
    content: MessageContent


class UserMessage(ClassicModel):
    role: Literal["user"] = "user"
    content: MessageContent


class ToolCall(ClassicModel):
    """A tool call in 0.3.1's flat shape: ``id``, ``name``, ``arguments`` (a JSON string)."""

    id: str
    name: str
    arguments: str


class AssistantMessage(ClassicModel):
    role: Literal["assistant"] = "assistant"
    content: MessageContent | None = None
    reasoning_content: str | None = None
    thinking_blocks: list[Any] | None = None
    tool_calls: list[ToolCall] | None = None


class ToolMessage(ClassicModel):
    role: Literal["tool"] = "tool"
    tool_call_id: str
    content: MessageContent


Message: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolMessage | TextMessage
ChatMessage = Message
Messages = list[Message]
ChatMessages = list[Message]
Info = dict[str, Any]
SamplingArgs = dict[str, Any]
State = dict[str, Any]
RolloutInput = dict[str, Any]
Tool = dict[str, Any]
MessageType = Literal["chat", "completion"]
RewardFunc = Callable[..., float | Awaitable[float]]
IndividualRewardFunc = RewardFunc
GroupRewardFunc = Callable[..., list[float] | Awaitable[list[float]]]
DatasetBuilder = Callable[[], Any]
RolloutScore = dict[str, Any]
GenerateOutputs = Any
