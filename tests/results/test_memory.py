"""A run with results_path holds its rows on disk: 100,000 single-turn rollouts stay far under
the memory the rows themselves would take, and memory barely grows with the number of rollouts
(each run in its own process; reading the outputs back — summary, pass@k, two DataFrame columns —
included)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.helpers.paths import REPO


def _peak(n: int) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "benchmarks/memory.py", "--one", "--n", str(n)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["n"] == n and result["lazy"]
    return result


@pytest.mark.slow
def test_memory_is_flat_in_the_number_of_rollouts():
    small, large = _peak(30_000), _peak(100_000)
    # About 3 KB per row were held in memory before rows went to disk (372 MB at 100k); now the
    # interpreter with its libraries is most of the peak (~170-230 MB measured).
    assert large["peak_mb"] < 350, large
    # Measured growth: under 100 bytes per extra rollout. A run that kept each row, or each
    # formatted input, in memory grows by several hundred bytes to kilobytes per rollout.
    per_rollout = (large["peak_mb"] - small["peak_mb"]) * 2**20 / (100_000 - 30_000)
    assert per_rollout < 250, (small, large, per_rollout)
