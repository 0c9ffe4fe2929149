"""Messages at the classic boundary: plain OpenAI-format dicts in, verifiers 0.3.1's message
models out, and back.

verifiers_lite keeps messages as plain dicts. Where classic code sees them — an
``env_response``, a stop condition, a reward function, the state — they are the models of
:mod:`verifiers_lite.classic.types` (:func:`classic_message`, :func:`upgrade`, in place), made
as 0.3.1 made them: an assistant's tool calls in the flat ``{"id", "name", "arguments"}``
shape, text/image/audio content parts as part models. Requests and rows get plain dicts again
(:func:`to_plain`): tool calls in the OpenAI shape, unset optional fields left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from verifiers_lite.classic.types import (
    AssistantMessage,
    ImageUrlContentPart,
    InputAudioContentPart,
    SystemMessage,
    TextContentPart,
    TextMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

_MODELS: dict[str, type[BaseModel]] = {
    "text": TextMessage,
    "system": SystemMessage,
    "user": UserMessage,
    "assistant": AssistantMessage,
    "tool": ToolMessage,
}
_PARTS: dict[str, type[BaseModel]] = {
    "text": TextContentPart,
    "image_url": ImageUrlContentPart,
    "input_audio": InputAudioContentPart,
}


def _part(part: Any) -> Any:
    if isinstance(part, Mapping) and part.get("type") in _PARTS:
        return _PARTS[str(part["type"])].model_validate(dict(part))
    return part


def tool_call(value: Any) -> Any:
    """A stored (OpenAI-shaped) or flat tool call as 0.3.1 kept it: flat, ``arguments`` a
    JSON string. A call of another shape is kept as it is, as 0.3.1 did."""
    if isinstance(value, ToolCall) or not isinstance(value, Mapping):
        return value
    if "name" in value and "arguments" in value:
        return ToolCall.model_validate(dict(value))
    function = value.get("function")
    if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
        return value
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {})
    call_id = value.get("id")
    return ToolCall(
        id=call_id if isinstance(call_id, str) else function["name"],
        name=function["name"],
        arguments=arguments,
    )


def classic_message(message: Any) -> Any:
    """``message`` (a dict, or already a message model) as 0.3.1's message model of its role.
    An object with ``role`` and ``content`` is kept as it is (0.3.1 took such objects)."""
    if not isinstance(message, Mapping):
        if hasattr(message, "role") and hasattr(message, "content"):
            return message
        raise TypeError(
            f"Invalid messages item type: {type(message).__name__}. Expected vf.Message-like objects."
        )
    data = dict(message)
    if isinstance(data.get("content"), list):
        data["content"] = [_part(p) for p in data["content"]]
    if data.get("role") == "assistant" and isinstance(data.get("tool_calls"), list):
        data["tool_calls"] = [tool_call(c) for c in data["tool_calls"]]
    model = _MODELS.get(str(data.get("role")))
    if model is None:
        raise ValueError(f"Unknown role: {data.get('role')}")
    return model.model_validate(data)


def upgrade(messages: Any) -> Any:
    """Turn a message list into message models in place; a string (a completion-style
    prompt) or None is returned as it is."""
    if isinstance(messages, list):
        for i, m in enumerate(messages):
            if not isinstance(m, BaseModel):
                messages[i] = classic_message(m)
    return messages


def _plain_call(call: Any) -> Any:
    if isinstance(call, ToolCall):
        return {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
    return to_plain(call)


def _plain_model(model: BaseModel) -> dict[str, Any]:
    data = {k: v for k, v in vars(model).items() if v is not None}
    data.update({k: v for k, v in (model.__pydantic_extra__ or {}).items() if v is not None})
    calls = data.get("tool_calls")
    out = {k: to_plain(v) for k, v in data.items() if k != "tool_calls"}
    if calls:
        out["tool_calls"] = [_plain_call(c) for c in calls]
    return out


def to_plain(value: Any) -> Any:
    """``value`` with every message model (and part, and tool call) turned back into plain
    OpenAI-format dicts and lists."""
    if isinstance(value, BaseModel):
        return _plain_model(value)
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    return value


def plain_messages(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """Messages as plain OpenAI-format dicts (what the model client sends)."""
    return [to_plain(classic_message(m)) for m in messages]


def sanitize_tool_calls(messages: list[Any]) -> list[Any]:
    """Classic helper: the messages unchanged (tool calls become plain dicts when sent)."""
    return messages


def concat_messages(parts: Iterable[Any]) -> list[Any]:
    """Classic helper: message lists joined into one list."""
    out: list[Any] = []
    for part in parts:
        out.extend(part or [])
    return out
