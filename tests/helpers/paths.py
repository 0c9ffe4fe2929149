"""Where this checkout's files are, for tests that read them or start processes in the checkout."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
NOTEBOOKS = REPO / "notebooks"
