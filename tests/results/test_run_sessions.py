"""A resumed run is marked as such and its duration is the sum of its sessions' durations
(each measured here independently, around the call or the process); the DataFrame carries the
final assistant text and how often each rollout ran."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import verifiers_lite as vf
from tests.helpers.envs import make_env
from tests.helpers.paths import REPO
from verifiers_lite.results.store import read_rows
from verifiers_lite.testing.waiting import wait_until


def _timed(call):
    t0 = time.perf_counter()
    out = call()
    return out, time.perf_counter() - t0


def test_resumed_run_sums_its_sessions_and_says_so(fake_server, tmp_path):
    fake_server.configure(latency_ms=150)  # each session takes a measurable time
    client, path = vf.ChatClient(fake_server.base_url), str(tmp_path / "run")
    first, took_1 = _timed(
        lambda: make_env(8).evaluate_sync(
            client,
            "fake-arith",
            num_examples=4,
            rollouts_per_example=2,
            max_concurrent=2,
            results_path=path,
            progress=False,
        )
    )
    assert first.metadata["resumed"] is False and len(first.metadata["sessions"]) == 1
    time.sleep(1.5)  # a pause between the sessions, which the run's duration must not count
    second, took_2 = _timed(
        lambda: make_env(8).evaluate_sync(
            client,
            "fake-arith",
            num_examples=8,
            rollouts_per_example=2,
            max_concurrent=2,
            results_path=path,
            progress=False,
        )
    )
    meta = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert meta["resumed"] is True and len(meta["sessions"]) == 2
    s1, s2 = meta["sessions"]
    assert (s1["rollouts"], s2["rollouts"]) == (
        8,
        8,
    )  # the second session ran only the new examples
    # Each session's recorded time lies within the call that ran it (generous lower bound).
    for recorded, measured in ((s1["duration_s"], took_1), (s2["duration_s"], took_2)):
        assert 0.5 * measured <= recorded <= measured + 0.05, (recorded, measured)
    assert abs(meta["duration_s"] - (s1["duration_s"] + s2["duration_s"])) < 1e-9
    # The run spans the pause; its duration does not.
    assert meta["end_time"] - meta["start_time"] >= meta["duration_s"] + 1.4
    assert meta["start_time"] == s1["start_time"] and meta["end_time"] == s2["end_time"]
    # Every consumer reads the summed duration.
    compared = vf.compare([vf.load_results(path)], details=True)
    assert abs(compared["wall_time_s"].iloc[0] - meta["duration_s"]) < 1e-9
    assert "resumed: 2 sessions" in vf.load_results(path)._repr_html_()


def test_a_killed_session_is_closed_at_its_last_write(fake_server, tmp_path):
    fake_server.configure(latency_ms=50)
    results = tmp_path / "run"
    spawned = time.time()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.run.resume_worker", fake_server.base_url, str(results), "0"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(
            lambda: len(read_rows(results / "results.jsonl")) >= 6 or proc.poll() is not None,
            "six rows saved",
            timeout=60,
        )
    except AssertionError:
        proc.kill()  # leave nothing running behind a failed wait
        raise
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed = time.time()
    saved = len(read_rows(results / "results.jsonl"))
    assert 0 < saved < 36, "the kill should land mid-run"
    fake_server.reset()
    out = make_env(12).evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=3,
        max_concurrent=4,
        results_path=str(results),
        progress=False,
    )
    first, second = out.metadata["sessions"]
    assert out.metadata["resumed"] is True and first["end_estimated"] is True
    # The killed session started after the process did and ended at its last write, before the kill.
    assert spawned <= first["start_time"] <= first["end_time"] <= killed
    assert second["rollouts"] == 36 - saved and "end_estimated" not in second
    assert abs(out.metadata["duration_s"] - first["duration_s"] - second["duration_s"]) < 1e-9


class _Echo(vf.MultiTurnEnv):
    """Two model turns; the environment's reply after the first, and a closing note after the
    second that ends the rollout (so the completion ends with a user message)."""

    async def env_response(self, messages, state):
        if state["turns"] == 2:
            state["done"] = True
            return [{"role": "user", "content": "thanks, that is all"}]
        return [{"role": "user", "content": "and again?"}]


def test_dataframe_has_the_final_assistant_text_and_the_attempts(fake_server, tmp_path):
    env = _Echo(
        dataset=[{"question": f"q{i}", "answer": ""} for i in range(3)],
        max_turns=3,
        rubric=vf.Rubric([lambda completion: 1.0]),
    )
    client = vf.ScriptedClient(
        lambda messages: f"reply {len(messages)} to {messages[0]['content']}"
    )
    df = env.evaluate_sync(client, "m", progress=False).to_pandas()
    # [user q] -> reply (seeing 1 message) -> user -> reply (seeing 3) -> closing user message
    assert df["completion_text"].tolist() == [f"reply 3 to q{i}" for i in range(3)]
    assert [c[-1]["role"] for c in df["completion"]] == ["user"] * 3
    assert df["attempts"].tolist() == [1, 1, 1]
    cols = df.columns.tolist()
    assert cols.index("completion_text") == cols.index("completion") + 1

    # A resume reruns the failed rollouts: their attempts count 2, the others 1.
    fake_server.configure(
        faults=[{"status": 400}, {"status": 400}]
    )  # 400 fails at once, not retried
    path = str(tmp_path / "run")
    first = make_env(4).evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=1,
        max_concurrent=1,
        results_path=path,
        progress=False,
    )
    failed = sorted(r["example_id"] for r in first.rows if r["error"])
    assert len(failed) == 2
    resumed = (
        make_env(4)
        .evaluate_sync(
            vf.ChatClient(fake_server.base_url),
            "fake-arith",
            rollouts_per_example=1,
            max_concurrent=1,
            results_path=path,
            progress=False,
        )
        .to_pandas()
    )
    expected = [2 if e in failed else 1 for e in resumed["example_id"]]
    assert resumed["attempts"].tolist() == expected
    assert resumed["completion_text"].str.contains(r"\\boxed\{").all()
