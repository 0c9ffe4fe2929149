"""matplotlib for the notebook plots, imported lazily and failing with the install command."""

from __future__ import annotations

from types import ModuleType

from verifiers_lite._util.extras import require


def pyplot() -> ModuleType:
    """matplotlib.pyplot, on the Agg backend when there is no display (CI, SSH, scripts)."""
    import os
    import sys

    mpl = require("matplotlib", "the notebook plots", "notebook")
    # In a kernel matplotlib-inline is the default already; elsewhere without a display,
    # force Agg so figure creation never tries to open a window.
    if (
        "matplotlib.pyplot" not in sys.modules
        and not os.environ.get("DISPLAY")
        and "ipykernel" not in sys.modules
    ):
        mpl.use("Agg")
    import matplotlib.pyplot as plt

    return plt
