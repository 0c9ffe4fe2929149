"""Property: for random datasets, kill points (SIGKILL of a real subprocess) and changed
arguments, a resumed run equals a fresh run row for row, or is refused naming what changed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import verifiers_lite as vf
from tests.helpers.paths import REPO
from tests.run.resume_property_worker import build
from verifiers_lite.testing.waiting import wait_until

# change -> the field a refusal must name (None: the resumed run must equal a fresh one)
CHANGES = {
    "none": None,
    "fewer_examples": None,
    "seed": "env_args",
    "model": "model",
    "sampling": "sampling_args",
    "rollouts": "rollouts_per_example",
    "independent": "independent_scoring",
    "dataset": "other inputs",
}


def _apply(cfg: dict, change: str) -> dict:
    cfg = json.loads(json.dumps(cfg))
    if change == "fewer_examples":
        cfg["num_examples"] = max(1, cfg["num_examples"] - 1)
    elif change == "seed":
        cfg["seed"] += 1
    elif change == "model":
        cfg["model"] = "fake-echo"  # another model the server serves
    elif change == "sampling":
        cfg["sampling"] = {"max_tokens": 64}
    elif change == "rollouts":
        cfg["rollouts"] += 1
    elif change == "independent":
        cfg["independent"] = not cfg["independent"]
    elif change == "dataset":
        cfg["pairs"][0] = [cfg["pairs"][0][0] + 50, cfg["pairs"][0][1]]
    return cfg


def _run_and_kill(base_url: str, path: Path, cfg: dict, kill_after_lines: int) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.run.resume_property_worker",
            base_url,
            str(path),
            json.dumps(cfg),
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    results = path / "results.jsonl"
    try:
        wait_until(
            lambda: (
                proc.poll() is not None
                or (results.exists() and results.read_bytes().count(b"\n") >= kill_after_lines)
            ),
            f"{kill_after_lines} rows saved",
            timeout=60,
            interval=0.005,
        )
    except AssertionError:
        proc.kill()  # leave nothing running behind a failed wait
        raise
    os.kill(proc.pid, signal.SIGKILL) if proc.poll() is None else None
    proc.wait()


def _key(rows):
    return [
        (r["example_id"], r["rollout_index"], json.dumps(r["prompt"]), r["reward"]) for r in rows
    ]


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pairs=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), min_size=2, max_size=6),
    rollouts=st.integers(1, 3),
    independent=st.booleans(),
    kill_at=st.integers(0, 12),
    change=st.sampled_from(sorted(CHANGES)),
)
def test_resume_equals_a_fresh_run_or_is_refused(
    fake_server, pairs, rollouts, independent, kill_at, change
):
    fake_server.configure(latency_ms=20)
    cfg = {
        "pairs": [list(p) for p in pairs],
        "num_examples": len(pairs),
        "rollouts": rollouts,
        "independent": independent,
        "seed": 0,
        "model": "fake-arith",
        "sampling": {},
    }
    new = _apply(cfg, change)
    client = vf.ChatClient(fake_server.base_url)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run"
        _run_and_kill(fake_server.base_url, path, cfg, kill_at)
        from verifiers_lite.results.store import read_rows

        saved_run = (path / "metadata.json").exists()
        saved_example0 = any(r["example_id"] == 0 for r in read_rows(path / "results.jsonl"))
        must_refuse = CHANGES[change] is not None and (
            saved_example0 if change == "dataset" else saved_run
        )
        env, kwargs = build(new)
        try:
            resumed = env.evaluate_sync(client, new["model"], results_path=str(path), **kwargs)
        except vf.ResumeMismatchError as exc:
            assert must_refuse, f"{change!r} refused where it should resume: {exc}"
            assert CHANGES[change] in str(exc)
            return
        assert not must_refuse, f"change {change!r} was not refused"
        fresh_env, fresh_kwargs = build(new)
        fresh = fresh_env.evaluate_sync(client, new["model"], **fresh_kwargs)
        assert _key(resumed.rows) == _key(fresh.rows)
