"""The names classic code imports from ``verifiers.types``: message constructors and type aliases.

Message "classes" build :class:`~verifiers_lite.classic.messages.ClassicMessage` dicts (so
``vf.ToolMessage(content=..., tool_call_id=...)`` is a tool message dict that also reads as an
object); the rest are aliases for annotations.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from verifiers_lite.classic.messages import ClassicMessage, ClassicToolCall, tool_call
from verifiers_lite.core.messages import Message


class _RoleMessage(ClassicMessage):
    """A message of a fixed role, made from keywords: ``ToolMessage(content=..., tool_call_id=...)``."""

    __slots__ = ()
    ROLE = ""

    def __init__(self, *args: Any, **fields: Any) -> None:
        super().__init__(*args, **fields)
        self.setdefault("role", type(self).ROLE)
        if self.get("tool_calls"):
            self["tool_calls"] = [tool_call(c) for c in self["tool_calls"]]


class SystemMessage(_RoleMessage):
    __slots__ = ()
    ROLE = "system"


class UserMessage(_RoleMessage):
    __slots__ = ()
    ROLE = "user"


class AssistantMessage(_RoleMessage):
    __slots__ = ()
    ROLE = "assistant"


class ToolMessage(_RoleMessage):
    __slots__ = ()
    ROLE = "tool"


ToolCall = ClassicToolCall
ChatMessage = Message
Messages = list[Any]
ChatMessages = list[Any]
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
