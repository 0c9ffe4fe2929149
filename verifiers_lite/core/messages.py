"""Chat message validation and normalisation (OpenAI chat format, plain dicts)."""

from __future__ import annotations

from typing import Any

Message = dict[str, Any]
"""A chat message (OpenAI format) as a plain dict; the one definition the package shares."""
Messages = list[Message]

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


def normalize_messages(messages: Any, where: str = "prompt") -> Messages:
    """Return ``messages`` as a list of plain message dicts, or raise ValueError naming the fault.

    Accepts a string (one user message), dicts, or objects with ``model_dump()`` (pydantic /
    openai types). ``where`` prefixes error messages, e.g. ``"row 3, field 'prompt'"``.
    """
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if not isinstance(messages, (list, tuple)):
        raise ValueError(f"{where}: expected a list of messages, got {type(messages).__name__}")
    out: Messages = []
    for i, msg in enumerate(messages):
        if hasattr(msg, "model_dump"):
            msg = msg.model_dump(exclude_none=True)
        _check_message(msg, i, where)
        out.append(dict(msg))
    return out


def messages_in_form(messages: Any, where: str = "prompt") -> bool:
    """Whether ``messages`` is already what :func:`normalize_messages` would return (a list of
    plain, valid message dicts), checked without copying. A list of plain dicts with an invalid
    message raises the ValueError :func:`normalize_messages` would raise."""
    if type(messages) is not list:
        return False
    for i, msg in enumerate(messages):
        if type(msg) is not dict:
            return False
        _check_message(msg, i, where)
    return True


def _check_message(msg: Any, i: int, where: str) -> None:
    """Raise ValueError naming the fault when ``msg`` (message ``i``) is not a valid message."""
    if not isinstance(msg, dict):
        raise ValueError(f"{where}: message {i} must be a dict, got {type(msg).__name__}")
    role = msg.get("role")
    if role is None:
        raise ValueError(f"{where}: message {i} is missing 'role'")
    if not isinstance(role, str) or role not in ROLES:
        raise ValueError(
            f"{where}: message {i} has unknown role {role!r} (expected one of {sorted(ROLES)})"
        )
    content = msg.get("content")
    if content is None and not (role == "assistant" and msg.get("tool_calls")):
        # only an assistant turn that calls tools may come without text
        problem = "is missing 'content'" if "content" not in msg else "has content None"
        raise ValueError(f"{where}: message {i} ({role}) {problem}")
    elif content is not None and not isinstance(content, (str, list)):
        raise ValueError(
            f"{where}: message {i} has content of type {type(content).__name__}; "
            "expected a string or a list of content parts"
        )
    if isinstance(content, list):
        for j, part in enumerate(content):
            if not isinstance(part, dict) or "type" not in part:
                raise ValueError(
                    f"{where}: message {i} content part {j} must be a dict with 'type'"
                )


def message_text(message: Message) -> str:
    """The text of a message, joining text parts of multi-part content."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def last_assistant_text(completion: Messages) -> str:
    """Text of the last assistant message in ``completion`` ('' if none)."""
    for msg in reversed(completion):
        if msg.get("role") == "assistant":
            return message_text(msg)
    return ""
