"""100,000 single-turn rollouts with results_path stay under 500 MB peak RSS (own process)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_hundred_thousand_rollouts_stay_under_500_mb():
    proc = subprocess.run([sys.executable, "benchmarks/memory.py", "--n", "100000"], cwd=ROOT,
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = re.search(r"(\d+) rollouts in .* peak RSS (\d+) MB", proc.stdout)
    assert m, proc.stdout
    assert int(m.group(1)) == 100_000
    assert int(m.group(2)) < 500, proc.stdout
