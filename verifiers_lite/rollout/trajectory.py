"""Stop reasons and the ``truncated`` rule shared by every rollout class."""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["STOP_REASONS", "StopReason", "Trajectory", "as_trajectory", "is_truncated"]

StopReason = Literal["stop", "length", "max_turns", "api_error", "error"]

#: ``stop``: the assistant answered without tool calls (natural end).
#: ``length``: a token limit ended it (``max_tokens``, or ``max_trajectory_tokens``).
#: ``max_turns``: the assistant still called tools when ``max_turns`` was reached.
#: ``api_error``: the model API failed (``APIMultiTurnRollout`` only); that trajectory ends.
#: ``error``: that trajectory failed in ``MultiTurnRollout`` (its sampling, tools or template
#: raised, or its prompt did not fit: ``error`` starts with ``prompt_too_long:``); the others
#: are unaffected.
STOP_REASONS: frozenset[str] = frozenset({"stop", "length", "max_turns", "api_error", "error"})

_TRUNCATING = frozenset({"length", "max_turns"})

Trajectory = dict[str, Any]


def is_truncated(stop_reason: str) -> bool:
    """``truncated`` is true exactly when a limit cut the trajectory short (length, max_turns).

    A natural end (``stop``) is complete; ``api_error``/``error`` are failures, not truncations.
    """
    if stop_reason not in STOP_REASONS:
        raise ValueError(f"unknown stop_reason {stop_reason!r}")
    return stop_reason in _TRUNCATING


def as_trajectory(item: Trajectory | list[dict[str, Any]]) -> Trajectory:
    """Accept a trajectory dict (with ``messages``) or a bare message list."""
    if isinstance(item, list):
        return {"messages": item}
    if not isinstance(item, dict) or not isinstance(item.get("messages"), list):
        raise TypeError("a trajectory is a dict with a 'messages' list (or a list of messages)")
    return item
