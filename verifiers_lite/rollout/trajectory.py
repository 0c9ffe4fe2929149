"""Trajectories of the token engine: the record family's :class:`Trajectory`, with the core's
stop reasons and ``truncated`` rule (:mod:`verifiers_lite.core.records`)."""

from __future__ import annotations

from typing import Any

from verifiers_lite.core.records import STOP_REASONS, StopReason, Trajectory, is_truncated

__all__ = ["STOP_REASONS", "StopReason", "Trajectory", "as_trajectory", "is_truncated"]


def as_trajectory(item: Trajectory | list[dict[str, Any]]) -> Trajectory:
    """Accept a trajectory dict (with ``messages``) or a bare message list."""
    if isinstance(item, list):
        return {"messages": item}
    if not isinstance(item, dict) or not isinstance(item.get("messages"), list):
        raise TypeError("a trajectory is a dict with a 'messages' list (or a list of messages)")
    return item
