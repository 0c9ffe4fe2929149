"""Lazy imports of the notebook extra, failing with the install command."""

from __future__ import annotations

from types import ModuleType

EXTRA_HINT = "pip install 'verifiers_lite[notebook]'"


def require(module: str) -> ModuleType:
    """Import ``module`` or raise ImportError naming the extra that provides it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{module} is needed for this; install it with: {EXTRA_HINT}") from exc


def pyplot() -> ModuleType:
    """matplotlib.pyplot, on the Agg backend when there is no display (CI, SSH, scripts)."""
    import os
    import sys

    mpl = require("matplotlib")
    # In a kernel matplotlib-inline is the default already; elsewhere without a display,
    # force Agg so figure creation never tries to open a window.
    if "matplotlib.pyplot" not in sys.modules and not os.environ.get("DISPLAY") and "ipykernel" not in sys.modules:
        mpl.use("Agg")
    import matplotlib.pyplot as plt

    return plt
