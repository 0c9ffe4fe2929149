"""SIGKILL of a generate process at 20 random points (grouped, independent, with and without Ray):
the resumed run ends with the exact row set, no duplicate, every group whole."""

from __future__ import annotations

import importlib.util
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

import verifiers_lite as vf
from tests.helpers.envs import make_env
from tests.helpers.paths import REPO
from tests.helpers.results_files import line_count
from verifiers_lite.results.store import read_rows
from verifiers_lite.testing.waiting import wait_until

N, R = 12, 3
HAS_RAY = importlib.util.find_spec("ray") is not None
# 20 kill points in all: (mode, executor, seed); delays are drawn per point from its seed.
POINTS = (
    [("grouped", "local", s) for s in range(7)]
    + [("independent", "local", s) for s in range(7)]
    + [("grouped", "ray", s) for s in range(3)]
    + [("independent", "ray", s) for s in range(3)]
)


def _wait_until_quiet(server, quiet_for: float = 0.5, timeout: float = 15.0) -> None:
    deadline, last, since = time.monotonic() + timeout, None, time.monotonic()
    while time.monotonic() < deadline:
        stats = server.stats()
        now = (stats["requests"], stats["in_flight"])
        if now != last:
            last, since = now, time.monotonic()
        elif stats["in_flight"] == 0 and time.monotonic() - since >= quiet_for:
            return
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "executor", "seed"), POINTS)
def test_random_sigkill_then_resume(fake_server, tmp_path, mode, executor, seed):
    if executor == "ray" and not HAS_RAY:
        pytest.skip("Ray is an optional extra: pip install 'verifiers_lite[ray]'")
    fake_server.configure(latency_ms=25)
    independent = mode == "independent"
    results = tmp_path / "run"
    rng = random.Random(f"{mode}-{executor}-{seed}")
    # A random point in the run: after a random number of result lines, plus a random few ms so
    # the kill also lands between and during writes.
    kill_after_lines, jitter = rng.randint(1, 2 * N * R // 3), rng.uniform(0.0, 0.01)
    args = [
        sys.executable,
        "-m",
        "tests.run.resume_worker",
        fake_server.base_url,
        str(results),
        "1" if independent else "0",
        executor,
    ]
    proc = subprocess.Popen(
        args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        wait_until(
            lambda: (
                line_count(results / "results.jsonl") >= kill_after_lines or proc.poll() is not None
            ),
            f"{kill_after_lines} rows saved",
            timeout=90,
            interval=0.002,
        )
    except AssertionError:
        os.killpg(proc.pid, signal.SIGKILL)  # leave nothing running behind a failed wait
        raise
    time.sleep(jitter)  # the kill's random moment: between or during writes
    os.killpg(proc.pid, signal.SIGKILL)  # the whole process group: Ray's workers die too
    proc.wait()
    on_disk = read_rows(results / "results.jsonl")
    assert len(on_disk) < N * R, "the kill should land before the run ends"
    if not independent:
        assert all(c == R for c in Counter(r["example_id"] for r in on_disk).values()), (
            "a partial group on disk"
        )
    _wait_until_quiet(fake_server)  # Ray workers of the dead driver may still finish a request
    fake_server.reset()
    out = make_env(N).evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=R,
        results_path=str(results),
        independent_scoring=independent,
        progress=False,
    )
    keys = [(r["example_id"], r["rollout_index"]) for r in out.rows]
    assert len(keys) == len(set(keys))
    assert sorted(keys) == [(e, i) for e in range(N) for i in range(R)]
    assert fake_server.stats()["requests"] == N * R - len(on_disk)
    if not independent:
        for eid in range(N):
            assert abs(sum(r["advantage"] for r in out.rows if r["example_id"] == eid)) < 1e-9
    assert sorted(
        (r["example_id"], r["rollout_index"]) for r in read_rows(results / "results.jsonl")
    ) == sorted(keys)
