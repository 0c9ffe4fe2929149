"""Per-trajectory JSON trace files."""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from verifiers_lite.core.records import Trajectory

__all__ = ["TraceCallback", "SuccessCallback", "write_trace", "write_traces"]

logger = logging.getLogger(__name__)

#: Returns False/None to skip a trajectory, True to store it whole, or a dict to store instead.
TraceCallback = Callable[[Trajectory], Any]
#: Returns True for ``ok-`` file names, False for ``fail-``.
SuccessCallback = Callable[[Trajectory], bool]


def write_trace(
    trace_dir: str | os.PathLike[str],
    trajectory: Trajectory,
    index: int,
    trace_callback: TraceCallback | None = None,
    success_callback: SuccessCallback | None = None,
) -> Path | None:
    """Write one trajectory as ``{ok|fail}-{index:05d}-{uuid}.json``; the path, or None if skipped.

    Without ``success_callback`` a trajectory is ``ok`` when it ended naturally (``stop``). The
    random suffix keeps names unique when the same prompt is rolled out many times, across calls
    and processes.
    """
    data: Any = trajectory
    if trace_callback is not None:
        decision = trace_callback(trajectory)
        if not decision:
            return None
        if isinstance(decision, dict):
            data = decision
    ok = (
        success_callback(trajectory)
        if success_callback
        else trajectory.get("stop_reason") == "stop"
    )
    directory = Path(trace_dir)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{'ok' if ok else 'fail'}-{index:05d}-{uuid.uuid4().hex[:12]}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, default=str, indent=1), encoding="utf-8")
    tmp.replace(path)  # readers never see a half-written trace
    return path


def write_traces(
    trace_dir: str | os.PathLike[str],
    trajectories: Sequence[Trajectory],
    trace_callback: TraceCallback | None = None,
    success_callback: SuccessCallback | None = None,
) -> int:
    """Write one trace per trajectory; returns how many failed.

    A callback that raises or a directory that cannot be written is logged and counted, never
    raised: traces are a by-product, the finished trajectories are the result.
    """
    failed = 0
    for i, t in enumerate(trajectories):
        try:
            write_trace(trace_dir, t, i, trace_callback, success_callback)
        except Exception as e:  # never lose results over a trace
            failed += 1
            logger.warning("trace %d not written to %s: %s: %s", i, trace_dir, type(e).__name__, e)
    return failed
