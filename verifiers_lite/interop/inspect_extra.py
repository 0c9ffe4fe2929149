"""inspect_ai, imported through the one optional-dependency helper (the ``inspect`` extra)."""

from __future__ import annotations

from types import ModuleType

from verifiers_lite._util.extras import require

FEATURE = "inspect_ai interop"


def inspect_module(name: str = "inspect_ai") -> ModuleType:
    """Module ``name`` of inspect_ai, or an error naming the ``inspect`` extra."""
    return require(name, FEATURE, "inspect", package="inspect_ai")
