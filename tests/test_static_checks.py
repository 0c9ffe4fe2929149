"""The code stays lint-clean (ruff), type-clean (mypy) and layered (import-linter), so all three
are part of the suite."""

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


def test_layers_are_kept():
    """pyproject's import-linter contract: UI and CLI on top, the core below, no upward import."""
    proc = subprocess.run([str(Path(sys.executable).with_name("lint-imports"))], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-1000:]
