"""``vf-lite view``: a local web app to read runs, transcripts and rewards (FastAPI + uvicorn,
assets shipped in the package, no network), also shown inline in notebooks (:func:`view`) and
exported as one self-contained HTML file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

# The public names are the imports of the TYPE_CHECKING block below, each imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.ui.viewer.serve import ViewerFrame, run_viewer, view
    from verifiers_lite.ui.viewer.standalone import standalone_html, write_html
