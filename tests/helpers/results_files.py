"""A run directory's files as a test that kills a run reads them, written or not yet."""

from __future__ import annotations

from pathlib import Path


def line_count(path: Path) -> int:
    """The lines written to ``path`` so far (0 before the file exists)."""
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0
