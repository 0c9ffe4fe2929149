"""Runs and tasks that travel to and from other evaluation tools: inspect_ai logs written from a
run (:func:`export_inspect`) and read as runs (:func:`load_inspect_log`).

Each needs its tool as an optional extra (the ``inspect`` extra), imported
only when used. This package's public names are the imports of the ``TYPE_CHECKING`` block
below, imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())


if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.interop.inspect_export import export_inspect
    from verifiers_lite.interop.inspect_import import load_inspect_log
