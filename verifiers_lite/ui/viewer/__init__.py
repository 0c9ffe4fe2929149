"""``vf-lite view``: a local web app to read runs, transcripts and rewards (FastAPI + uvicorn,
assets shipped in the package, no network), also shown inline in notebooks (:func:`view`) and
exported as one self-contained HTML file."""

from __future__ import annotations

from verifiers_lite.ui.viewer.serve import ViewerFrame, run_viewer, view
from verifiers_lite.ui.viewer.standalone import standalone_html, write_html

__all__ = ["ViewerFrame", "run_viewer", "standalone_html", "view", "write_html"]
