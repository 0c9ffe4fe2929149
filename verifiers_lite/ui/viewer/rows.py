"""Row shapes the viewer sends: one-line summaries for tables, searchable text, JSON-safe values."""

from __future__ import annotations

import json
import math
from typing import Any, cast

from verifiers_lite.core import columns
from verifiers_lite.core.records import TOKEN_KEYS, Row

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


# Who speaks last in a shown message column (its one-line excerpt); excerpt lengths of text.
_SPEAKER = {"prompt": "user"}
_EXCERPT = {"answer": 60}


def row_summary(row: Row) -> dict[str, Any]:
    """One table line of a rollout: every shown or indexed column (``core.columns``; messages
    and text as one-line excerpts), the metrics, and the error's message."""
    out: dict[str, Any] = {}
    for column in columns.current():
        if not (column.label or column.indexed) or column.expand:
            continue
        value = column.value(row)
        if column.kind == "messages":
            value = last_message(value, _SPEAKER.get(column.name, "assistant"))
        elif column.kind == "float":
            value = _number(value)
        elif column.kind == "str" and column.name in _EXCERPT:
            value = _short(str(value if value is not None else ""), _EXCERPT[column.name])
        out[column.name] = value
    err = row.get("error")
    out["metrics"] = row.get("metrics") or {}
    out["error"] = _short(
        str(err.get("message", "")) if isinstance(err, dict) else str(err or ""), 120
    )
    if "rollout_index" not in row:  # a hand-written file's only rollout
        out["rollout_index"] = 0
    return cast(dict[str, Any], json_safe(out))


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
