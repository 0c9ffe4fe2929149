"""A run's sessions: the first call and each resume of the same ``results_path``.

Each session's start, end, duration, the rollouts it ran (0 when everything asked for was
saved already) and its reproducibility manifest (what produced its rows: client, endpoints,
versions; :mod:`verifiers_lite.ledger.manifest`) go to ``metadata["sessions"]``, appended by
each resume, never overwritten; each row it wrote has its index there (``row["session"]``).
The run's duration (``metadata["duration_s"]``) is their sum, so time spent between a crash and
its resume is not counted, and ``metadata["resumed"]`` says whether the run took more than one
session. A session that ended without writing its metadata (the process was killed) is closed
at the last write of ``results.jsonl`` and marked ``end_estimated``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, cast

from verifiers_lite.results.run_metadata import RunMetadata, SessionRecord


def earlier_sessions(saved: RunMetadata, results_file: Path) -> list[SessionRecord]:
    """The sessions recorded in a run's saved metadata, each closed (a run saved before
    sessions were recorded counts as one session, from its start and end times). A run saved
    with one ``manifest`` for the whole run had it rewritten by each session: it is the last
    session's."""
    sessions = [
        cast(SessionRecord, dict(s)) for s in saved.get("sessions") or [] if isinstance(s, dict)
    ]
    if not sessions and isinstance(saved.get("start_time"), (int, float)):
        sessions = [
            cast(
                SessionRecord,
                {"start_time": saved["start_time"], "end_time": saved.get("end_time")},
            )
        ]
    if sessions and isinstance(saved.get("manifest"), dict) and "manifest" not in sessions[-1]:
        sessions[-1]["manifest"] = saved["manifest"]
    return [_closed(s, results_file) for s in sessions]


def _closed(session: SessionRecord, results_file: Path) -> SessionRecord:
    start, end = session.get("start_time"), session.get("end_time")
    if not isinstance(start, (int, float)):
        return {**session, "duration_s": float(session.get("duration_s") or 0.0)}
    if not isinstance(end, (int, float)):  # killed before it could say when it ended
        try:
            last_write = os.stat(results_file).st_mtime
        except OSError:
            last_write = start
        end = max(start, last_write)
        session = {**session, "end_time": end, "end_estimated": True}
    return {**session, "duration_s": float(session.get("duration_s", end - start))}


def begin_session(
    metadata: RunMetadata,
    earlier: list[SessionRecord],
    start: float,
    manifest: dict[str, Any],
) -> None:
    """Record a new session starting at ``start`` after ``earlier`` ones, made by what
    ``manifest`` describes (the run's start time stays that of its first session)."""
    metadata["sessions"] = [*earlier, SessionRecord(start_time=start, manifest=manifest)]
    metadata["resumed"] = bool(earlier)
    metadata["start_time"] = (
        earlier[0]["start_time"] if earlier and "start_time" in earlier[0] else start
    )


def current_session(metadata: RunMetadata) -> tuple[int, SessionRecord]:
    """The running session: its index in ``metadata["sessions"]`` and its record."""
    sessions = metadata["sessions"]
    return len(sessions) - 1, sessions[-1]


def end_session(metadata: RunMetadata, end: float, rollouts: int) -> None:
    """Close the current session (``rollouts`` run in it) and sum the run's duration."""
    first: SessionRecord = {"start_time": metadata.get("start_time", end)}
    sessions = metadata.setdefault("sessions", [first])
    current = sessions[-1]
    current["end_time"] = end
    current["duration_s"] = end - float(current.get("start_time", end))
    current["rollouts"] = rollouts
    metadata["duration_s"] = sum(float(s.get("duration_s") or 0.0) for s in sessions)
    metadata["end_time"] = end


def run_duration(metadata: RunMetadata) -> float | None:
    """Seconds the run took: its sessions' durations summed (``duration_s``); for runs saved
    before sessions were recorded, end minus start; None while unknown."""
    if isinstance(metadata.get("duration_s"), (int, float)):
        return float(metadata["duration_s"])
    start, end = metadata.get("start_time"), metadata.get("end_time")
    if isinstance(start, (int, float)) and isinstance(end, (int, float)):
        return float(end - start)
    return None
