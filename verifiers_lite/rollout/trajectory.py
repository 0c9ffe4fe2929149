"""Trajectories of the token engine; their stop reasons and ``truncated`` rule are the core's
(:mod:`verifiers_lite.records`)."""

from __future__ import annotations

from typing import Any

from ..records import STOP_REASONS, StopReason, is_truncated

__all__ = ["STOP_REASONS", "StopReason", "Trajectory", "as_trajectory", "is_truncated"]

Trajectory = dict[str, Any]


def as_trajectory(item: Trajectory | list[dict[str, Any]]) -> Trajectory:
    """Accept a trajectory dict (with ``messages``) or a bare message list."""
    if isinstance(item, list):
        return {"messages": item}
    if not isinstance(item, dict) or not isinstance(item.get("messages"), list):
        raise TypeError("a trajectory is a dict with a 'messages' list (or a list of messages)")
    return item
