"""Chat messages between this library's OpenAI-style dicts and inspect_ai's ``ChatMessage``
models: roles, text and image parts, an assistant turn's reasoning (``reasoning_content`` here,
a ``ContentReasoning`` part there) and tool calls (JSON-string arguments here, a dict there),
tool results with their call id and function name."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from verifiers_lite.interop.inspect_extra import inspect_module


def _parts_to_inspect(content: Any) -> str | list[Any]:
    """A message's content as inspect takes it: a string, or text and image parts."""
    if not isinstance(content, list):
        return "" if content is None else str(content)
    c = inspect_module("inspect_ai.model")
    parts: list[Any] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            parts.append(c.ContentText(text=str(part.get("text", ""))))
        elif kind == "image_url":
            url = part.get("image_url")
            parts.append(c.ContentImage(image=url.get("url") if isinstance(url, dict) else url))
        else:
            parts.append(c.ContentText(text=json.dumps(part, default=str)))
    return parts


def _tool_calls_to_inspect(calls: Sequence[dict[str, Any]]) -> list[Any]:
    tool = inspect_module("inspect_ai.tool")
    out = []
    for call in calls:
        fn = call.get("function") or {}
        raw = fn.get("arguments")
        try:
            args = json.loads(raw) if isinstance(raw, str) else dict(raw or {})
            error = None
        except ValueError as exc:
            args, error = {}, f"arguments are not JSON: {exc}: {raw!r}"
        if not isinstance(args, dict):
            args, error = {}, f"arguments are not a JSON object: {raw!r}"
        out.append(
            tool.ToolCall(
                id=str(call.get("id") or ""),
                function=str(fn.get("name") or ""),
                arguments=args,
                parse_error=error,
            )
        )
    return out


def to_inspect_message(message: dict[str, Any]) -> Any:
    """One message as inspect's ``ChatMessage`` of its role."""
    m = inspect_module("inspect_ai.model")
    role = message.get("role")
    content = _parts_to_inspect(message.get("content"))
    if role == "system":
        return m.ChatMessageSystem(content=content)
    if role == "user":
        return m.ChatMessageUser(content=content)
    if role == "tool":
        return m.ChatMessageTool(
            content=content,
            tool_call_id=message.get("tool_call_id"),
            function=message.get("name"),
        )
    if role != "assistant":
        raise ValueError(f"a message with role {role!r} has no inspect_ai counterpart")
    reasoning = message.get("reasoning_content")
    if reasoning:
        text = content if isinstance(content, list) else [m.ContentText(text=content)]
        content = [m.ContentReasoning(reasoning=str(reasoning)), *text]
    calls = message.get("tool_calls")
    return m.ChatMessageAssistant(
        content=content, tool_calls=_tool_calls_to_inspect(calls) if calls else None
    )


def to_inspect_messages(messages: Any) -> list[Any]:
    """A prompt or completion (a message list, or a plain string: one user turn) in inspect's terms."""
    if isinstance(messages, str):
        return [to_inspect_message({"role": "user", "content": messages})]
    return [to_inspect_message(msg) for msg in messages or []]


def _content_from_inspect(content: Any) -> tuple[Any, str | None]:
    """A message's content here (a string when it is text alone) and its reasoning, if any."""
    if isinstance(content, str):
        return content, None
    reasoning = [p.reasoning for p in content if getattr(p, "type", None) == "reasoning"]
    rest = [p for p in content if getattr(p, "type", None) != "reasoning"]
    joined = "\n".join(reasoning) if reasoning else None
    if all(getattr(p, "type", None) == "text" for p in rest):
        return "".join(p.text for p in rest), joined
    parts: list[dict[str, Any]] = []
    for p in rest:
        if p.type == "text":
            parts.append({"type": "text", "text": p.text})
        elif p.type == "image":
            parts.append({"type": "image_url", "image_url": {"url": p.image}})
        else:
            parts.append({"type": "text", "text": p.model_dump_json(exclude_none=True)})
    return parts, joined


def from_inspect_message(message: Any) -> dict[str, Any]:
    """One inspect ``ChatMessage`` as this library's message dict."""
    content, reasoning = _content_from_inspect(message.content)
    out: dict[str, Any] = {"role": message.role, "content": content}
    if message.role == "assistant":
        if message.tool_calls and content == "":
            out["content"] = None  # a turn of tool calls alone, as a chat completion says it
        if reasoning is not None:
            out["reasoning_content"] = reasoning
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function, "arguments": json.dumps(call.arguments)},
                }
                for call in message.tool_calls
            ]
    elif message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
        if message.function:
            out["name"] = message.function
        if message.error is not None and not content:
            out["content"] = f"Error: {message.error.message}"
    return out


def from_inspect_messages(messages: Sequence[Any] | str) -> list[dict[str, Any]]:
    """Inspect messages (or a sample's string input: one user turn) as message dicts."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return [from_inspect_message(m) for m in messages]
