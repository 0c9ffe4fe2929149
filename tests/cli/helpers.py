"""``vf-lite`` as a user runs it: a subprocess of this venv's Python, and the run it wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def vf_lite(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-m", "verifiers_lite.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_dir(root: Path) -> Path:
    runs = [p for p in root.glob("*/*") if (p / "metadata.json").exists()]
    assert len(runs) == 1, runs
    return runs[0]
