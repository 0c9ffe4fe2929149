"""A rollout's model calls as a row stores them, and whole again on read.

Each call's request holds the whole conversation so far; stored as is, a rollout of n turns
would keep its prompt n times. A stored step keeps only what is new: how many messages of the
previous call's request (plus that call's answer; the row's prompt for the first call) it
starts with (``messages_kept``) and the messages after them (``messages_new``). Its answer is
left out when it is the completion's matching assistant message. A step that carries its own
token ids (a program's call) keeps its prompt ids the same way (``prompt_ids_kept``,
``prompt_ids_new``). Calls whose conversations branch (a program's, kept under
:data:`BRANCHED_CALLS`) are stored each against the last call of its branch
(:func:`compact_calls`). :func:`model_calls` rebuilds every request whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from verifiers_lite.core.records import TrajectoryStep

__all__ = [
    "BRANCHED_CALLS",
    "compact_calls",
    "compact_steps",
    "expand_calls",
    "expand_steps",
    "model_calls",
    "tool_call_records",
]

BRANCHED_CALLS = "program_calls"
"""The State key of every model call of a rollout whose calls branch (a program environment's,
each call with its ``branch``): a row keeps it in ``env_state``, stored by :func:`compact_calls`."""


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


def _delta(part: Mapping[str, Any], key: str, base: Sequence[Any]) -> dict[str, Any]:
    """``part`` with its list ``key`` stored against ``base``: how many leading items it shares
    (``KEY_kept``) and the rest (``KEY_new``)."""
    items = part[key]
    kept = _shared(base, items)
    return {
        **{k: v for k, v in part.items() if k != key},
        f"{key}_kept": kept,
        f"{key}_new": list(items[kept:]),
    }


def _whole(part: Mapping[str, Any], key: str, base: Sequence[Any]) -> dict[str, Any]:
    """``part`` with its list ``key`` rebuilt from ``base`` (the inverse of :func:`_delta`)."""
    kept, new = f"{key}_kept", f"{key}_new"
    return {
        **{k: v for k, v in part.items() if k not in (kept, new)},
        key: [*base[: int(part.get(kept) or 0)], *(part.get(new) or [])],
    }


def _compact_one(
    step: Mapping[str, Any], base: list[Any], base_ids: list[Any]
) -> tuple[dict[str, Any], list[Any], list[Any]]:
    """One step as stored against ``base`` (the conversation so far) and ``base_ids`` (its token
    ids, when the step carries its own); with the conversation and ids after it."""
    stored = dict(step)
    request = step.get("request")
    if isinstance(request, Mapping) and isinstance(request.get("messages"), list):
        stored["request"] = _delta(request, "messages", base)
        base = [*request["messages"], step.get("message")]
    tokens = step.get("tokens")
    if isinstance(tokens, Mapping) and isinstance(tokens.get("prompt_ids"), list):
        stored["tokens"] = _delta(tokens, "prompt_ids", base_ids)
        base_ids = [*tokens["prompt_ids"], *(tokens.get("completion_ids") or [])]
    return stored, base, base_ids


def _expand_one(
    raw: Any, base: list[Any], base_ids: list[Any]
) -> tuple[dict[str, Any], list[Any], list[Any]]:
    """One stored step whole again (see :func:`_compact_one`); a whole step as it is."""
    step: dict[str, Any] = dict(raw) if isinstance(raw, Mapping) else {}
    request = step.get("request")
    if isinstance(request, Mapping) and "messages_new" in request:
        step["request"] = _whole(request, "messages", base)
    tokens = step.get("tokens")
    if isinstance(tokens, Mapping) and "prompt_ids_new" in tokens:
        step["tokens"] = _whole(tokens, "prompt_ids", base_ids)
    return step, base, base_ids


def _after(step: Mapping[str, Any], base: list[Any], base_ids: list[Any]) -> tuple[list, list]:
    """The conversation and token ids after a whole step (the base of the next one)."""
    request = step.get("request")
    if isinstance(request, Mapping) and isinstance(request.get("messages"), list):
        base = [*request["messages"], step.get("message")]
    tokens = step.get("tokens")
    if isinstance(tokens, Mapping) and isinstance(tokens.get("prompt_ids"), list):
        base_ids = [*tokens["prompt_ids"], *(tokens.get("completion_ids") or [])]
    return base, base_ids


def compact_steps(
    prompt: Any, completion: Any, steps: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The steps as a row stores them: each request as its new messages (and its own token ids,
    when a step carries them, as the new ones), each answer left out when the completion holds
    it (only when every step's answer is the completion's reply in turn, so a reader can put
    them back by position)."""
    replies = _replies(completion)
    same = len(replies) == len(steps) and all(
        s.get("message") is r or s.get("message") == r for s, r in zip(steps, replies, strict=True)
    )
    base: list[Any] = list(prompt) if isinstance(prompt, list) else []
    base_ids: list[Any] = []
    out: list[dict[str, Any]] = []
    for step in steps:
        stored, base, base_ids = _compact_one(step, base, base_ids)
        if same:
            stored.pop("message", None)
        out.append(stored)
    return out


def expand_steps(prompt: Any, completion: Any, steps: Sequence[Any]) -> list[dict[str, Any]]:
    """Stored steps whole again: each request's messages rebuilt, each answer put back.
    Steps already whole (a live State's, an older row's) come back as they are."""
    replies = _replies(completion)
    base: list[Any] = list(prompt) if isinstance(prompt, list) else []
    base_ids: list[Any] = []
    out: list[dict[str, Any]] = []
    for i, raw in enumerate(steps):
        step, base, base_ids = _expand_one(raw, base, base_ids)
        if "message" not in step and i < len(replies):
            step["message"] = replies[i]
        base, base_ids = _after(step, base, base_ids)
        out.append(step)
    return out


def compact_calls(steps: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Calls whose conversations branch (a program's, each step with its ``branch``), as a row
    stores them: each against the last call of its own branch (a branch's first call against
    the call before it), so a long conversation costs its new messages per call, whatever
    other branches run between its calls. Answers are kept."""
    last: dict[Any, tuple[list[Any], list[Any]]] = {}
    previous: tuple[list[Any], list[Any]] = ([], [])
    out: list[dict[str, Any]] = []
    for step in steps:
        stored, base, base_ids = _compact_one(step, *last.get(step.get("branch"), previous))
        last[step.get("branch")] = previous = (base, base_ids)
        out.append(stored)
    return out


def expand_calls(steps: Sequence[Any]) -> list[dict[str, Any]]:
    """Stored calls (:func:`compact_calls`) whole again; whole ones come back as they are."""
    last: dict[Any, tuple[list[Any], list[Any]]] = {}
    previous: tuple[list[Any], list[Any]] = ([], [])
    out: list[dict[str, Any]] = []
    for raw in steps:
        step, base, base_ids = _expand_one(raw, *last.get(_branch(raw), previous))
        last[step.get("branch")] = previous = _after(step, base, base_ids)
        out.append(step)
    return out


def _branch(raw: Any) -> Any:
    return raw.get("branch") if isinstance(raw, Mapping) else None


def model_calls(row: Mapping[str, Any]) -> list[TrajectoryStep]:
    """Every model call of a row (or a State), each request whole: the messages and sampling
    arguments sent, the answer (content, reasoning, tool calls), finish reason, the model that
    answered, usage, timing, and the tool calls it made with their results and durations.
    Rows of older runs give what they kept (finish reasons and answers). A program's row gives
    every call it made, in order, each with its ``branch`` (its trajectory is the branch the
    program ended on)."""
    env_state = row.get("env_state")
    branched = row.get(BRANCHED_CALLS)
    if branched is None and isinstance(env_state, Mapping):
        branched = env_state.get(BRANCHED_CALLS)
    if isinstance(branched, list):
        return cast(list[TrajectoryStep], expand_calls(branched))
    steps = row.get("trajectory")
    if steps is None:  # an older row: the finish reasons of the completion's replies
        replies = _replies(row.get("completion"))
        reasons = row.get("finish_reasons") or []
        steps = [{"finish_reason": f} for f in reasons[: len(replies)]]
    expanded = expand_steps(row.get("prompt"), row.get("completion"), steps)
    return cast(list[TrajectoryStep], expanded)


def tool_call_records(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every tool call record (:class:`~verifiers_lite.core.records.ToolCallRecord`) of a row's
    or a State's trajectory steps, in order: a stored step keeps its tool calls whole, so no
    request is rebuilt. The records themselves, not copies (a reader may restore their text)."""
    records: list[dict[str, Any]] = []
    steps = row.get("trajectory")
    for step in steps if isinstance(steps, list) else ():
        calls = step.get("tool_calls") if isinstance(step, Mapping) else None
        records.extend(c for c in (calls if isinstance(calls, list) else ()) if type(c) is dict)
    return records
