"""The code stays lint-clean (ruff) and type-clean (mypy), so both are part of the suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean():
    proc = _run("ruff", "check", "verifiers_lite", "environments")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]


def test_mypy_is_clean():
    proc = _run("mypy", "verifiers_lite")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]
