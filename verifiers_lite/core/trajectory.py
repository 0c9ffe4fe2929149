"""A rollout's model calls as a row stores them, and whole again on read.

Each call's request holds the whole conversation so far; stored as is, a rollout of n turns
would keep its prompt n times. A stored step keeps only what is new: how many messages of the
previous call's request (plus that call's answer; the row's prompt for the first call) it
starts with (``messages_kept``) and the messages after them (``messages_new``). Its answer is
left out when it is the completion's matching assistant message. :func:`model_calls` rebuilds
every request whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from verifiers_lite.core.records import TrajectoryStep

__all__ = ["compact_steps", "expand_steps", "model_calls"]


def _replies(completion: Any) -> list[dict[str, Any]]:
    """The completion's assistant messages, in order."""
    if not isinstance(completion, list):
        return []
    return [m for m in completion if type(m) is dict and m.get("role") == "assistant"]


def _shared(base: Sequence[Any], messages: Sequence[Any]) -> int:
    """How many leading messages ``messages`` shares with ``base``."""
    n = 0
    for a, b in zip(base, messages, strict=False):
        if a is not b and a != b:
            break
        n += 1
    return n


def compact_steps(
    prompt: Any, completion: Any, steps: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The steps as a row stores them: each request as its new messages, each answer left out
    when the completion holds it (only when every step's answer is the completion's reply in
    turn, so a reader can put them back by position)."""
    replies = _replies(completion)
    same = len(replies) == len(steps) and all(
        s.get("message") is r or s.get("message") == r for s, r in zip(steps, replies, strict=True)
    )
    base: list[Any] = list(prompt) if isinstance(prompt, list) else []
    out: list[dict[str, Any]] = []
    for step in steps:
        stored = dict(step)
        request = step.get("request")
        if isinstance(request, Mapping) and isinstance(request.get("messages"), list):
            sent = request["messages"]
            kept = _shared(base, sent)
            stored["request"] = {
                **{k: v for k, v in request.items() if k != "messages"},
                "messages_kept": kept,
                "messages_new": list(sent[kept:]),
            }
            base = [*sent, step.get("message")]
        if same:
            stored.pop("message", None)
        out.append(stored)
    return out


def expand_steps(prompt: Any, completion: Any, steps: Sequence[Any]) -> list[dict[str, Any]]:
    """Stored steps whole again: each request's messages rebuilt, each answer put back.
    Steps already whole (a live State's, an older row's) come back as they are."""
    replies = _replies(completion)
    base: list[Any] = list(prompt) if isinstance(prompt, list) else []
    out: list[dict[str, Any]] = []
    for i, raw in enumerate(steps):
        step: dict[str, Any] = dict(raw) if isinstance(raw, Mapping) else {}
        if "message" not in step and i < len(replies):
            step["message"] = replies[i]
        request = step.get("request")
        if isinstance(request, Mapping) and "messages_new" in request:
            kept = int(request.get("messages_kept") or 0)
            sent = [*base[:kept], *(request.get("messages_new") or [])]
            step["request"] = {
                **{k: v for k, v in request.items() if k not in ("messages_kept", "messages_new")},
                "messages": sent,
            }
        if isinstance(step.get("request"), Mapping):
            base = [*step["request"].get("messages", []), step.get("message")]
        out.append(step)
    return out


def model_calls(row: Mapping[str, Any]) -> list[TrajectoryStep]:
    """Every model call of a row (or a State), each request whole: the messages and sampling
    arguments sent, the answer (content, reasoning, tool calls), finish reason, the model that
    answered, usage, timing, and the tool calls it made with their results and durations.
    Rows of older runs give what they kept (finish reasons and answers)."""
    steps = row.get("trajectory")
    if steps is None:  # an older row: the finish reasons of the completion's replies
        replies = _replies(row.get("completion"))
        reasons = row.get("finish_reasons") or []
        steps = [{"finish_reason": f} for f in reasons[: len(replies)]]
    expanded = expand_steps(row.get("prompt"), row.get("completion"), steps)
    return cast(list[TrajectoryStep], expanded)
