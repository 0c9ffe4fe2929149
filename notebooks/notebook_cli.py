"""The command line of the single-notebook builders: ``--execute`` and ``--out``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import nbformat


def build_main(
    build: Callable[[], nbformat.NotebookNode], default_out: Path, description: str, timeout: int
) -> None:
    """Write the notebook ``build()`` makes to ``--out``; with ``--execute``, run it first."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--execute", action="store_true")
    ap.add_argument("--out", default=str(default_out))
    args = ap.parse_args()
    nb = build()
    if args.execute:
        from nbclient import NotebookClient

        # The kernel is this interpreter's, so the notebook runs in the venv that has the deps.
        resources = {"metadata": {"path": str(default_out.parent)}}
        NotebookClient(nb, kernel_name="python3", timeout=timeout, resources=resources).execute()
    nbformat.write(nb, args.out)
    print(f"wrote {args.out}", file=sys.stderr)
