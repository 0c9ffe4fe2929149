"""Where are we running? A Jupyter front end that renders widgets, or something else.

The check must not misfire: plain IPython (TerminalInteractiveShell), scripts (no IPython) and
qtconsole (a real ZMQ kernel whose front end cannot render widgets) all answer False.
``VF_PROGRESS=widget|text|none`` overrides the guess.
"""

from __future__ import annotations

import os
import sys


def progress_override() -> str | None:
    """``VF_PROGRESS`` if set to a known mode, else None."""
    mode = os.environ.get("VF_PROGRESS", "").strip().lower()
    return mode if mode in ("widget", "text", "none") else None


def in_jupyter_kernel() -> bool:
    """True inside an ipykernel whose front end can show widgets (Lab, Notebook, VS Code, nbclient)."""
    if "IPython" not in sys.modules:  # a script never imported IPython: cheap and certain
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None or type(shell).__name__ != "ZMQInteractiveShell":
        return False  # terminal IPython, in-process qtconsole, embedded shells
    if "IPKernelApp" not in getattr(shell, "config", {}):
        return False
    return not _parent_is_qtconsole()


def _parent_is_qtconsole() -> bool:
    # qtconsole launches its kernel itself; the kernel cannot ask the front end, but it can
    # look at who started it (Linux /proc; elsewhere assume a widget-capable front end).
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    return "qtconsole" in cmdline
