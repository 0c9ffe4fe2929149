"""Crash-safe resume: SIGKILL mid-run, torn lines, mismatched metadata."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import verifiers_lite as vf
from tests.helpers.envs import make_env
from tests.helpers.paths import REPO
from tests.helpers.results_files import line_count
from verifiers_lite.results.store import read_rows
from verifiers_lite.testing.waiting import wait_until

N_EXAMPLES, PER_EXAMPLE = 12, 3


def _run_until_killed(
    base_url: str, results: Path, independent: bool, kill_after_lines: int
) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.run.resume_worker",
            base_url,
            str(results),
            "1" if independent else "0",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(
            lambda: (
                line_count(results / "results.jsonl") >= kill_after_lines or proc.poll() is not None
            ),
            f"{kill_after_lines} rows saved",
            timeout=60,
            interval=0.005,
        )
    except AssertionError:
        proc.kill()  # leave nothing running behind a failed wait
        raise
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    proc.stderr.close()


def _check_complete(rows: list[dict], independent: bool) -> None:
    keys = [(r["example_id"], r["rollout_index"]) for r in rows]
    assert len(keys) == len(set(keys)), "duplicate (example_id, rollout_index)"
    assert sorted(keys) == [(e, i) for e in range(N_EXAMPLES) for i in range(PER_EXAMPLE)]
    if not independent:
        for eid, group in _groups(rows).items():
            assert abs(sum(r["advantage"] for r in group)) < 1e-9, f"group {eid} not scored whole"


def _groups(rows):
    out: dict = {}
    for r in rows:
        out.setdefault(r["example_id"], []).append(r)
    return out


@pytest.mark.parametrize("independent", [False, True])
@pytest.mark.parametrize("kill_after_lines", [1, 7, 20])
def test_sigkill_midway_then_resume_gives_exactly_the_expected_rows(
    fake_server, tmp_path, independent, kill_after_lines
):
    fake_server.configure(latency_ms=50)  # slow enough that a loaded machine still kills mid-run
    results = tmp_path / "run"
    _run_until_killed(fake_server.base_url, results, independent, kill_after_lines)
    on_disk = read_rows(results / "results.jsonl")
    assert 0 < len(on_disk) < N_EXAMPLES * PER_EXAMPLE, "the kill should land mid-run"
    if not independent:  # groups are on disk whole or not at all
        assert all(c == PER_EXAMPLE for c in Counter(r["example_id"] for r in on_disk).values())
    fake_server.reset()
    out = make_env(N_EXAMPLES).evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=PER_EXAMPLE,
        results_path=str(results),
        independent_scoring=independent,
        progress=False,
    )
    _check_complete(out.rows, independent)
    assert fake_server.stats()["requests"] == N_EXAMPLES * PER_EXAMPLE - len(
        on_disk
    )  # only what was missing
    _check_complete(read_rows(results / "results.jsonl"), independent)
    assert json.loads((results / "metadata.json").read_text())["status"] == "completed"


def test_rerun_of_a_finished_run_returns_at_once(fake_server, tmp_path):
    env, c = make_env(4), vf.ChatClient(fake_server.base_url)
    first = env.evaluate_sync(
        c, "fake-arith", rollouts_per_example=2, results_path=str(tmp_path), progress=False
    )
    before = fake_server.stats()["requests"]
    again = env.evaluate_sync(
        c, "fake-arith", rollouts_per_example=2, results_path=str(tmp_path), progress=False
    )
    assert fake_server.stats()["requests"] == before
    assert [r["trajectory_id"] for r in again.rows] == [r["trajectory_id"] for r in first.rows]


def test_torn_last_line_is_tolerated(fake_server, tmp_path):
    env, c = make_env(4), vf.ChatClient(fake_server.base_url)
    env.evaluate_sync(
        c, "fake-arith", rollouts_per_example=2, results_path=str(tmp_path), progress=False
    )
    path = tmp_path / "results.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(
        b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2]
    )  # the last group is torn
    fake_server.reset()
    out = env.evaluate_sync(
        c, "fake-arith", rollouts_per_example=2, results_path=str(tmp_path), progress=False
    )
    assert len(out) == 8 and fake_server.stats()["requests"] == 2  # only the torn group reruns
    assert len(read_rows(path)) == 8


def test_extras_beyond_rollouts_per_example_are_dropped(fake_server, tmp_path):
    env, c = make_env(3), vf.ChatClient(fake_server.base_url)
    env.evaluate_sync(
        c, "fake-arith", rollouts_per_example=2, results_path=str(tmp_path), progress=False
    )
    meta = json.loads((tmp_path / "metadata.json").read_text())
    extra = read_rows(tmp_path / "results.jsonl")[0] | {"rollout_index": 5}
    with open(tmp_path / "results.jsonl", "a") as f:
        f.write(json.dumps(extra) + "\n")
    assert meta["rollouts_per_example"] == 2
    out = env.evaluate_sync(
        c, "fake-arith", rollouts_per_example=2, results_path=str(tmp_path), progress=False
    )
    assert len(out) == 6 and max(r["rollout_index"] for r in out.rows) == 1


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"model": "fake-echo"}, "model"),  # another model the server serves
        ({"rollouts_per_example": 3}, "rollouts_per_example"),
    ],
)
def test_mismatched_metadata_is_refused_clearly(fake_server, tmp_path, change, field):
    env, c = make_env(2), vf.ChatClient(fake_server.base_url)
    env.evaluate_sync(
        c, "fake-arith", rollouts_per_example=2, results_path=str(tmp_path), progress=False
    )
    kwargs = {"model": "fake-arith", "rollouts_per_example": 2} | change
    with pytest.raises(vf.ResumeMismatchError, match=rf"holds a different run:\n  {field}: saved"):
        env.evaluate_sync(
            c, kwargs.pop("model"), **kwargs, results_path=str(tmp_path), progress=False
        )
    other_env = make_env(2)
    other_env.env_id = "another-env"
    with pytest.raises(
        vf.ResumeMismatchError, match="env_id: saved 'SingleTurnEnv', now 'another-env'"
    ):
        other_env.evaluate_sync(
            c, "fake-arith", rollouts_per_example=2, results_path=str(tmp_path), progress=False
        )


def test_keyboard_interrupt_leaves_results_resumable(fake_server, tmp_path):
    fake_server.configure(latency_ms=30)
    env, c = make_env(12), vf.ChatClient(fake_server.base_url)
    done = []

    def interrupt_after_two(stats, rows):
        done.extend(rows)
        if stats.done >= 6:
            raise KeyboardInterrupt

    class Interrupter:
        on_progress = staticmethod(interrupt_after_two)

    # KeyboardInterrupt from a callback is swallowed by CallbackSet only for Exceptions; it propagates.
    with pytest.raises(KeyboardInterrupt):
        env.evaluate_sync(
            c,
            "fake-arith",
            rollouts_per_example=3,
            max_concurrent=3,
            results_path=str(tmp_path),
            callbacks=[Interrupter()],
            progress=False,
        )
    saved = read_rows(tmp_path / "results.jsonl")
    assert 6 <= len(saved) < 36
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["status"] == "interrupted"
    # The interrupted session still names the endpoint it used (its /models entry may not have come).
    assert [e["endpoint"] for e in meta["sessions"][0]["manifest"]["endpoints"]] == [
        fake_server.base_url
    ]
    out = env.evaluate_sync(
        c, "fake-arith", rollouts_per_example=3, results_path=str(tmp_path), progress=False
    )
    _check = sorted((r["example_id"], r["rollout_index"]) for r in out.rows)
    assert _check == [(e, i) for e in range(12) for i in range(3)]
    assert [s["manifest"]["endpoints"][0]["endpoint"] for s in out.metadata["sessions"]] == [
        fake_server.base_url
    ] * 2


def test_real_sigint_in_a_script_cancels_and_leaves_the_run_resumable(fake_server, tmp_path):
    # Slow enough that the run is still going when Ctrl-C lands, even if this (busy) test
    # process notices the sixth saved row late: the rest of the run takes seconds.
    fake_server.configure(latency_ms=400)
    results = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.run.resume_worker", fake_server.base_url, str(results), "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(
            lambda: line_count(results / "results.jsonl") >= 6 or proc.poll() is not None,
            "six rows saved",
            timeout=60,
            interval=0.005,
        )
    except AssertionError:
        proc.kill()  # leave nothing running behind a failed wait
        raise
    os.kill(proc.pid, signal.SIGINT)  # Ctrl-C
    out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and b"KeyboardInterrupt" in err, (proc.returncode, out, err[-2000:])
    assert json.loads((results / "metadata.json").read_text())["status"] == "interrupted"
    # In-flight rollouts were cancelled, not left running (their connections close as it exits).
    wait_until(
        lambda: fake_server.stats()["in_flight"] == 0, "no model request left in flight", timeout=10
    )
    saved = read_rows(results / "results.jsonl")
    assert all(c == PER_EXAMPLE for c in Counter(r["example_id"] for r in saved).values())
    fake_server.reset()
    out = make_env(N_EXAMPLES).evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=PER_EXAMPLE,
        results_path=str(results),
        progress=False,
    )
    _check_complete(out.rows, independent=False)
    assert fake_server.stats()["requests"] == N_EXAMPLES * PER_EXAMPLE - len(saved)


def test_rerun_on_fewer_examples_keeps_the_others_on_disk(fake_server, tmp_path):
    env, c = make_env(6), vf.ChatClient(fake_server.base_url)
    env.evaluate_sync(
        c, "fake-arith", rollouts_per_example=2, results_path=str(tmp_path), progress=False
    )
    small = env.evaluate_sync(
        c,
        "fake-arith",
        num_examples=2,
        rollouts_per_example=2,
        results_path=str(tmp_path),
        progress=False,
    )
    assert sorted({r["example_id"] for r in small.rows}) == [0, 1]
    assert len(read_rows(tmp_path / "results.jsonl")) == 12  # examples 2-5 were not thrown away
    fake_server.reset()
    full = env.evaluate_sync(
        c, "fake-arith", rollouts_per_example=2, results_path=str(tmp_path), progress=False
    )
    assert len(full) == 12 and fake_server.stats()["requests"] == 0
