"""Run notebooks headless in a real ipykernel (the venv's Python) and record what the kernel sent."""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from tests.helpers.paths import NOTEBOOKS

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def install_kernelspec(root: Path) -> Path:
    """A ``python3`` kernelspec running *this* interpreter, found first via JUPYTER_PATH.

    A fresh machine may have no kernelspec, or a user-level ``python3`` pointing at another
    Python; this one wins over both and needs no ``ipykernel install``.
    """
    spec = root / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (verifiers_lite tests)",
                "language": "python",
            }
        )
    )
    return root


class RecordingClient(NotebookClient):
    """NotebookClient that keeps every iopub message of each cell, to prove the display was
    live (widget updates arrived while the cell was still running)."""

    def __init__(self, nb: nbformat.NotebookNode, **kw: Any) -> None:
        super().__init__(nb, **kw)
        self.messages: dict[int, list[dict[str, Any]]] = defaultdict(list)

    def process_message(self, msg: dict[str, Any], cell: Any, cell_index: int) -> Any:
        self.messages[cell_index].append({"msg_type": msg["msg_type"], "content": msg["content"]})
        return super().process_message(msg, cell, cell_index)

    def widget_updates(self, cell_index: int) -> list[dict[str, Any]]:
        """State changes sent by widgets during one cell (``comm_msg`` with method ``update``)."""
        return [
            m["content"]["data"]["state"]
            for m in self.messages[cell_index]
            if m["msg_type"] == "comm_msg"
            and m["content"].get("data", {}).get("method") == "update"
        ]


def execute(
    name: str, workdir: Path, env: dict[str, str] | None = None, timeout: int = 300
) -> tuple[nbformat.NotebookNode, RecordingClient]:
    """Execute ``notebooks/<name>`` in ``workdir``; the kernel inherits ``env`` on top of ours."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    old = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        client = RecordingClient(
            nb,
            kernel_name="python3",
            store_widget_state=True,
            timeout=timeout,
            resources={"metadata": {"path": str(workdir)}},
        )
        client.execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    nbformat.write(nb, workdir / name)
    return nb, client


def widget_models(nb: nbformat.NotebookNode) -> dict[str, dict[str, Any]]:
    """Saved widget models by id (``store_widget_state=True``)."""
    return nb.metadata["widgets"][WIDGET_STATE]["state"]


def outputs_of(nb: nbformat.NotebookNode, mime: str) -> list[tuple[int, Any]]:
    """(cell index, data) of every output carrying ``mime``."""
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if mime in out.get("data", {}):
                found.append((i, out["data"][mime]))
    return found


def errors_of(nb: nbformat.NotebookNode) -> list[str]:
    return [
        f"cell {i}: {o.get('ename')}: {o.get('evalue')}"
        for i, c in enumerate(nb.cells)
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
