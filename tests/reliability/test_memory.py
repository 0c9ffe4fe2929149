"""100,000 single-turn rollouts with results_path stay under 500 MB peak RSS (own process),
reading the outputs back (summary, pass@k, two DataFrame columns) included."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_hundred_thousand_rollouts_stay_under_500_mb():
    proc = subprocess.run([sys.executable, "benchmarks/memory.py", "--one", "--n", "100000"], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["n"] == 100_000 and result["lazy"]
    assert result["peak_mb"] < 500, result
