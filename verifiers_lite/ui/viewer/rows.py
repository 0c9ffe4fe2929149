"""Row shapes the viewer sends: one-line summaries for tables, searchable text, JSON-safe values."""

from __future__ import annotations

import json
import math
from typing import Any, cast

from verifiers_lite.core.records import Row
from verifiers_lite.core.state import TOKEN_KEYS

EXCERPT = 160


def json_safe(value: Any) -> Any:
    """``value`` with NaN/inf floats as None (strict JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def _number(value: Any) -> float | None:
    """A number, or None for anything else (a hand-edited file may hold text)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _short(text: str, limit: int = EXCERPT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def content_text(content: Any) -> str:
    """Text of a message's content: a string, or the text parts of a multimodal list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def last_message(messages: Any, role: str) -> str:
    """The last message of ``role`` as one line (a tool-call turn reads as its calls)."""
    if isinstance(messages, str):
        return _short(messages)
    for m in reversed(messages if isinstance(messages, list) else []):
        if not isinstance(m, dict) or m.get("role") != role:
            continue
        text = content_text(m.get("content"))
        if text.strip():
            return _short(text)
        calls = m.get("tool_calls") or []
        if calls:
            names = [
                str((c.get("function") or {}).get("name", "?"))
                for c in calls
                if isinstance(c, dict)
            ]
            return _short("→ " + ", ".join(names))
    return ""


def count_tool_calls(messages: Any) -> int:
    if not isinstance(messages, list):
        return 0
    return sum(len(m.get("tool_calls") or []) for m in messages if isinstance(m, dict))


def row_summary(row: Row) -> dict[str, Any]:
    """One table line of a rollout."""
    err = row.get("error")
    usage, timing = row.get("usage"), row.get("timing")
    usage = usage if isinstance(usage, dict) else {}
    timing = timing if isinstance(timing, dict) else {}
    return json_safe(
        {
            "example_id": row.get("example_id"),
            "rollout_index": row.get("rollout_index", 0),
            "reward": _number(row.get("reward")),
            "metrics": row.get("metrics") or {},
            "turns": row.get("turns"),
            "stop_reason": row.get("stop_reason"),
            "error_category": (
                err.get("category") if isinstance(err, dict) else ("unknown" if err else None)
            ),
            "error": _short(
                str(err.get("message", "")) if isinstance(err, dict) else str(err or ""), 120
            ),
            "prompt": last_message(row.get("prompt"), "user"),
            "completion": last_message(row.get("completion"), "assistant"),
            "answer": _short(str(row.get("answer") if row.get("answer") is not None else ""), 60),
            "tool_calls": count_tool_calls(row.get("completion")),
            "completion_tokens": usage.get("completion_tokens"),
            "rollout_ms": timing.get("rollout_ms"),
            "total_ms": timing.get("total_ms"),
        }
    )


def row_text(row: Row) -> str:
    """Everything a text search looks at: messages (their reasoning too), tool calls, answer,
    error, task, info."""
    parts: list[str] = [
        str(row.get("example_id")),
        str(row.get("answer") or ""),
        str(row.get("task") or ""),
    ]
    for key in ("prompt", "completion"):
        msgs = row.get(key)
        if isinstance(msgs, str):
            parts.append(msgs)
            continue
        for m in msgs if isinstance(msgs, list) else []:
            if not isinstance(m, dict):
                continue
            parts.append(content_text(m.get("content")))
            if isinstance(m.get("reasoning_content"), str):
                parts.append(m["reasoning_content"])
            for c in m.get("tool_calls") or []:
                fn = c.get("function") if isinstance(c, dict) else None
                if isinstance(fn, dict):
                    parts += [str(fn.get("name", "")), str(fn.get("arguments", ""))]
    err = row.get("error")
    if err:
        parts.append(json.dumps(err, ensure_ascii=False, default=str))
    if row.get("info"):
        parts.append(json.dumps(row["info"], ensure_ascii=False, default=str))
    return "\n".join(parts)


def strip_token_ids(row: Row) -> dict[str, int]:
    """Drop the token-id arrays from ``row`` (long, unreadable on a page); returns their lengths."""
    fields = cast(dict[str, Any], row)  # a row is a plain dict: drop its token keys by name
    return {k: len(fields.pop(k)) for k in TOKEN_KEYS if isinstance(fields.get(k), list)}
