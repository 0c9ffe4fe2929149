"""Messages as classic code reads them: ``msg.role``, ``msg.tool_calls[0].name``, and ``msg["role"]``.

Messages are plain OpenAI-format dicts in verifiers_lite. Classic code read them as objects
(verifiers 0.3.1's messages were pydantic models with item access too), so at the classic
boundary — an ``env_response``, a stop condition, a reward function — they are upgraded in place
to :class:`ClassicMessage`, a ``dict`` whose keys also read as attributes (a missing field reads
as None, as an unset optional model field did), and turned back into plain dicts before a row
is made (:func:`to_plain`). A tool call reads as ``call.id``, ``call.name``, ``call.arguments``
(0.3.1's flat shape) and as ``call.function.name`` (the OpenAI shape it is stored in).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_TOOL_CALL_KEYS = ("id", "name", "arguments", "function", "type")


class AttrDict(dict):  # type: ignore[type-arg]
    """A dict whose keys read (and write) as attributes; a missing key reads as None."""

    __slots__ = ()

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)  # copy, pickle and friends probe dunders
        return self.get(attr)

    def __setattr__(self, attr: str, value: Any) -> None:
        self[attr] = value

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        """The message as a plain dict (what pydantic messages answered)."""
        dumped = to_plain(self)
        if kwargs.get("exclude_none"):
            dumped = {k: v for k, v in dumped.items() if v is not None}
        return dumped


class ClassicToolCall(AttrDict):
    """One tool call: ``id``, ``name``, ``arguments`` (a JSON string), and ``function``."""

    __slots__ = ()

    def __getattr__(self, attr: str) -> Any:
        if attr in ("name", "arguments"):
            function = self.get("function")
            if isinstance(function, dict) and attr in function:
                return function[attr]
        if attr == "function":
            function = self.get("function")
            return (
                AttrDict(function)
                if isinstance(function, dict) and not isinstance(function, AttrDict)
                else function
            )
        return super().__getattr__(attr)


class ClassicMessage(AttrDict):
    """One chat message with attribute access; ``tool_calls`` read as :class:`ClassicToolCall`."""

    __slots__ = ()


def tool_call(value: Any) -> ClassicToolCall:
    """A stored or classic-shaped tool call as a :class:`ClassicToolCall` in the OpenAI shape
    (a flat ``{"id", "name", "arguments"}`` call is given its ``function`` part)."""
    if isinstance(value, ClassicToolCall):
        return value
    data = (
        dict(value)
        if isinstance(value, dict)
        else {k: getattr(value, k, None) for k in _TOOL_CALL_KEYS}
    )
    if not isinstance(data.get("function"), dict):
        data = {
            "id": data.get("id"),
            "type": "function",
            "function": {"name": data.get("name"), "arguments": data.get("arguments") or "{}"},
        }
    data.setdefault("type", "function")
    return ClassicToolCall(data)


def classic_message(message: Any) -> ClassicMessage:
    """``message`` (a dict or an object with ``model_dump``) as a :class:`ClassicMessage`."""
    if isinstance(message, ClassicMessage):
        return message
    if hasattr(message, "model_dump") and not isinstance(message, dict):
        message = message.model_dump(exclude_none=True)
    out = ClassicMessage(message)
    calls = out.get("tool_calls")
    if calls:
        dict.__setitem__(out, "tool_calls", [tool_call(c) for c in calls])
    return out


def upgrade(messages: Any) -> Any:
    """Upgrade a message list in place (each item a :class:`ClassicMessage`); a string (a
    completion-style prompt) or None is returned as it is."""
    if isinstance(messages, list):
        for i, m in enumerate(messages):
            if not isinstance(m, ClassicMessage):
                messages[i] = classic_message(m)
    return messages


def to_plain(value: Any) -> Any:
    """``value`` with every classic view turned back into plain dicts and lists."""
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    return value


def plain_messages(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """Messages as plain OpenAI-format dicts (what the model client sends)."""
    return [to_plain(classic_message(m)) for m in messages]


def sanitize_tool_calls(messages: list[Any]) -> list[Any]:
    """Classic helper: the messages unchanged (tool calls are plain JSON-ready dicts here)."""
    return messages


def concat_messages(parts: Iterable[Any]) -> list[Any]:
    """Classic helper: message lists joined into one list."""
    out: list[Any] = []
    for part in parts:
        out.extend(part or [])
    return out
