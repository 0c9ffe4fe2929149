"""A thinking model's reasoning: where it is read from, where it is kept, what goes back.

Reasoning is data, not content. Endpoints return it as ``reasoning_content`` (DeepSeek,
SGLang, older vLLM reasoning parsers) or ``reasoning`` (newer vLLM, OpenRouter), or inline as
``<think>…</think>`` before the answer (a model served without a reasoning parser). Whatever
its source, it is kept on the assistant message dict under :data:`REASONING_KEY`, never inside
``content``, so parsers and reward functions score the answer only. Which assistant messages
carry it back to the model on later turns is a :data:`ReasoningHistory` policy.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal, get_args

from verifiers_lite.core.messages import Message

REASONING_KEY = "reasoning_content"
"""The one key a message's reasoning is kept under (the field name most endpoints read back)."""

_READ_KEYS = ("reasoning_content", "reasoning")

ReasoningHistory = Literal["keep", "since_last_user", "strip"]
"""What goes back to the model on later turns:

- ``keep``: every assistant message keeps its reasoning (default);
- ``since_last_user``: only the assistant messages after the last user message (the current
  tool-calling turn: what interleaved thinking needs), older ones without it;
- ``strip``: no reasoning is sent back.
"""

REASONING_HISTORIES: tuple[str, ...] = get_args(ReasoningHistory)

ReasoningSplit = Callable[[str], "tuple[str | None, str]"]

_OPEN, _CLOSE = "<think>", "</think>"
_LEADING_THINK = re.compile(r"\s*<think>(.*?)</think>(.*)", re.DOTALL)


def check_reasoning_history(value: Any, where: str = "reasoning_history") -> ReasoningHistory:
    """``value`` if it is one of :data:`REASONING_HISTORIES`, else a ValueError naming them."""
    if value not in REASONING_HISTORIES:
        raise ValueError(
            f"{where} must be one of {', '.join(map(repr, REASONING_HISTORIES))}, got {value!r}"
        )
    return value  # type: ignore[no-any-return]


def split_think(text: str) -> tuple[str | None, str]:
    """``(reasoning, answer)`` of a text that thinks inline: ``<think>R</think>A``, or ``R</think>A``
    when the chat template wrote the opening tag. ``(None, text)`` when it holds no such block."""
    match = _LEADING_THINK.fullmatch(text)
    if match is not None and _OPEN not in match.group(2) and _CLOSE not in match.group(2):
        return match.group(1).strip(), match.group(2).strip()
    if _OPEN not in text and text.count(_CLOSE) == 1:
        reasoning, answer = text.split(_CLOSE)
        return reasoning.strip(), answer.strip()
    return None, text


def reasoning_of(message: Any) -> str | None:
    """The reasoning kept on ``message`` (None when it has none)."""
    if not isinstance(message, dict):
        return None
    value = message.get(REASONING_KEY)
    return value if isinstance(value, str) and value else None


def assistant_message(message: Message, split: ReasoningSplit | None = None) -> Message:
    """``message`` with its reasoning under :data:`REASONING_KEY` (``reasoning`` renamed; an empty
    one dropped) and, when ``split`` is given and the message has none, the reasoning ``split``
    finds inline in its text content moved out of ``content``. The same dict when nothing moves."""
    found = next((k for k in _READ_KEYS if isinstance(message.get(k), str) and message[k]), None)
    if found == REASONING_KEY and "reasoning" not in message:
        return message
    if found is not None:
        out = {k: v for k, v in message.items() if k not in _READ_KEYS}
        out[REASONING_KEY] = message[found]
        return out
    if any(k in message for k in _READ_KEYS):  # empty: no reasoning given
        message = {k: v for k, v in message.items() if k not in _READ_KEYS}
    content = message.get("content")
    if split is None or not isinstance(content, str):
        return message
    reasoning, answer = split(content)
    if reasoning is None:
        return message
    return {**message, "content": answer, REASONING_KEY: reasoning}


def history_for_request(messages: list[Message], policy: ReasoningHistory) -> list[Message]:
    """The messages as sent to the model under ``policy``: assistant messages whose reasoning is
    not to go back are copies without it; the others are the same dicts."""
    if policy == "keep":
        return messages
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    out = messages
    for i, m in enumerate(messages):
        if REASONING_KEY not in m or (policy == "since_last_user" and i > last_user):
            continue
        if out is messages:
            out = list(messages)
        out[i] = {k: v for k, v in m.items() if k != REASONING_KEY}
    return out


def completion_reasoning(completion: Any) -> str | None:
    """The reasoning of a completion's assistant turns, in order, joined by a blank line (None
    when no turn reasoned): the ``reasoning_text`` column."""
    if not isinstance(completion, list):
        return None
    parts = [
        r
        for r in (
            reasoning_of(m)
            for m in completion
            if isinstance(m, dict) and m.get("role") == "assistant"
        )
        if r
    ]
    return "\n\n".join(parts) if parts else None
