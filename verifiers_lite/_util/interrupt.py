"""What an interrupted run tells the user: one line saying what was saved and how to resume.

``generate()`` writes a note when it is interrupted; the sync bridge turns the
``KeyboardInterrupt`` it re-raises into :class:`RunInterrupted` carrying that note. In Jupyter
the note is shown alone, without the traceback through the event loop; set ``VF_DEBUG=1`` to
see the full traceback.
"""

from __future__ import annotations

import os
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

_lock = threading.Lock()
_notes: list[str] = []  # newest last; a run's note is taken by the call that started it
_count = 0
NOTE_WIDTH = 88  # characters per line of the note in a notebook


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C or a kernel interrupt; the message says what was saved and how
    to resume. A ``KeyboardInterrupt``, so code that catches that still does."""

    @property
    def _render_traceback_(self) -> Callable[[], list[str]]:
        # IPython renders an exception with this method as its lines alone; without it (debug),
        # the usual full traceback.
        if debug_tracebacks():
            raise AttributeError("_render_traceback_")
        return lambda: wrap_note(str(self))


def wrap_note(note: str, width: int = NOTE_WIDTH) -> list[str]:
    """``note`` as lines of at most ``width`` characters, broken between words (a notebook wraps
    a long output line wherever it hits the edge, mid-word; a path longer than a line stays whole)."""
    return textwrap.wrap(note, width, break_long_words=False, break_on_hyphens=False) or [note]


def debug_tracebacks() -> bool:
    """``VF_DEBUG=1`` (or true/yes): show full tracebacks for interrupts."""
    return os.environ.get("VF_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")


def interrupt_note(done: int, total: int, fresh: int, results_path: str | Path | None) -> str:
    """The one line shown for an interrupted run."""
    if results_path is None:
        return (
            f"KeyboardInterrupt: run stopped after {done} of {total} rollouts; nothing was saved "
            "(pass results_path=... to save rollouts as they finish and resume after an interrupt)."
        )
    left = total - done
    return (
        f"KeyboardInterrupt: run stopped; {done} of {total} rollouts are saved in {str(results_path)!r} "
        f"({fresh} new). To resume, run the same call again: only the {left} missing rollouts run."
    )


def record_note(note: str) -> None:
    """Called by the run that was interrupted."""
    global _count
    with _lock:
        _notes.append(note)
        del _notes[:-8]
        _count += 1


def mark() -> int:
    """Where the notes stand before a call, to take only the notes it made."""
    with _lock:
        return _count


def take_note(since: int) -> str | None:
    """The latest note recorded after ``mark()`` returned ``since``, if any."""
    with _lock:
        return _notes[-1] if _count > since and _notes else None


def as_run_interrupted(exc: KeyboardInterrupt, since: int) -> BaseException:
    """``exc`` as a :class:`RunInterrupted` with the run's note (unchanged when there is none)."""
    if isinstance(exc, RunInterrupted):
        return exc
    note = take_note(since)
    if note is None:
        return exc
    out = RunInterrupted(note)
    out.__cause__ = exc if debug_tracebacks() else None
    out.__suppress_context__ = not debug_tracebacks()
    return out
