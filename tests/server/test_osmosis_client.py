"""osmosis-ai's own ``RolloutClient`` (from the registry, in a Python >= 3.12 venv) against a
real ``vf-lite serve``: admission with every optional field sent as null or as an object,
results graded right, a duplicate id (409), cancel, wait_idle and auth (401).

The client runs as a subprocess in ``.venv-osmosis`` (made by ``.ci/install_osmosis.sh``, which
``scripts/test.sh`` runs); it imports nothing of verifiers_lite.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tests.server.helpers import SERVER_TESTS, start_serve
from verifiers_lite.testing.fake_server import FakeServerProcess

OSMOSIS_PYTHON = REPO / ".venv-osmosis" / "bin" / "python"
KEY = "osmosis-test-key"

pytestmark = pytest.mark.skipif(
    not OSMOSIS_PYTHON.exists(),
    reason=f"no {OSMOSIS_PYTHON.parent.parent} (osmosis-ai needs Python >= 3.12): "
    "run `bash .ci/install_osmosis.sh` (scripts/test.sh does)",
)


@pytest.fixture
def models() -> Iterator[tuple[FakeServerProcess, FakeServerProcess]]:
    with FakeServerProcess() as fast, FakeServerProcess(latency_ms=120_000) as slow:
        yield fast, slow


def _boxed_reward(row: dict) -> float:
    """The reward recomputed from the saved completion, independently of the server's rubric."""
    found = re.findall(r"\\boxed\{(-?\d+)\}", row["completion"][-1]["content"] or "")
    return 1.0 if found and found[-1] == row["answer"] else 0.0


def test_osmosis_client_end_to_end(
    models: tuple[FakeServerProcess, FakeServerProcess], tmp_path: Path
) -> None:
    fast, slow = models
    artifacts = tmp_path / "rows"
    # A long poll answers a change from the moment it arrives (osmosis-ai's server does the
    # same), so one that misses the queued -> running step waits for the next: keep it short.
    srv = start_serve(
        tmp_path,
        "srv_extra_fields_env",
        "--model",
        "fake-arith",
        "--artifacts-dir",
        str(artifacts),
        "--result-wait-timeout",
        "2",
        api_key=KEY,
    )
    try:
        done = subprocess.run(
            [
                str(OSMOSIS_PYTHON),
                str(SERVER_TESTS / "osmosis_driver.py"),
                srv.url,
                fast.base_url,
                slow.base_url,
                KEY,
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        srv.stop()
    assert done.returncode == 0, done.stderr[-3000:] + srv.log()[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])

    assert (seen["wrong_key_health"], seen["wrong_key_rollout"]) == (401, 401)
    assert seen["health_ok"] is True
    results = seen["results"]
    assert sorted(results) == sorted(f"r{i}" for i in range(10))
    for i in range(10):
        got, row = results[f"r{i}"], json.loads((artifacts / f"r{i}.json").read_text())
        assert got["status"] == "success"
        assert row["answer"] == str(2 * i + 1)
        assert got["reward"] == _boxed_reward(row)
        # extra_fields reached the rollout as info["extra_fields"]; null sends none.
        assert got["metrics"]["extra_echo"] == (float(i) if i % 2 else -1.0)
        assert row["info"].get("extra_fields") == ({"echo": i} if i % 2 else None)
    assert (
        0 < sum(r["reward"] for r in results.values()) < 10
    )  # fake-arith is right about half the time
    assert seen["duplicate"] == 409
    assert (
        seen["cancel"] == {"doomed": "cancelled_running"}
        and seen["cancelled_status"] == "cancelled"
    )
    assert seen["cancel_unknown"] == {"never-sent": "not_found"}
    assert seen["idle_active"] == 0
    assert fast.stats()["requests"] == 10  # the refused and duplicate admissions ran nothing
