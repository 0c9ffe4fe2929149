"""Limits and hygiene: every program ends within its limit and leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import verifiers_lite as vf
from tests.programs.helpers import ROOT, agent, alive, child_env, group_members, program_env
from verifiers_lite.testing.waiting import wait_until


def test_the_call_past_max_calls_is_refused_and_the_program_stopped() -> None:
    env = program_env(
        agent("calls_forever"), limits=vf.programs.ProgramLimits(max_calls=3, kill_grace=0.5)
    )
    row = env.evaluate_sync(vf.ScriptedClient("again"), "m", progress=False).rows[0]
    assert row["error"] is None, row["error"]
    assert row["stop_reason"] == "max_turns" and row["turns"] == 3
    program = row["env_state"]["program"]
    status, body = program["stdout"].split(" ", 1)
    assert status == "400" and json.loads(body)["error"]["code"] == "max_turns"
    assert program["stopped"] == "max_turns" and program["exit_code"] == -signal.SIGTERM


def test_the_call_past_the_token_budget_is_refused() -> None:
    # ScriptedClient counts words: 1 prompt word + 2 completion words per call.
    env = program_env(
        agent("calls_forever"), limits=vf.programs.ProgramLimits(max_total_tokens=7, kill_grace=0.5)
    )
    row = env.evaluate_sync(vf.ScriptedClient("two words"), "m", progress=False).rows[0]
    assert row["stop_reason"] == "length" and row["turns"] == 3
    assert row["usage"]["prompt_tokens"] + row["usage"]["completion_tokens"] == 9


def _pids(path: Path) -> dict[str, int]:
    return json.loads(wait_until(lambda: path.exists() and path.read_text(), f"{path} written"))


def test_a_spinning_program_is_stopped_at_its_timeout() -> None:
    env = program_env(agent("spin"), limits=vf.programs.ProgramLimits(timeout=1.5, kill_grace=0.5))
    t0 = time.monotonic()
    row = env.evaluate_sync(vf.ScriptedClient("x"), "m", progress=False).rows[0]
    assert time.monotonic() - t0 < 1.5 + 0.5 + 15  # a sanity bound: the limit, then slack
    assert row["stop_reason"] == "timeout" and row["error"] is None
    assert row["env_state"]["program"]["exit_code"] == -signal.SIGTERM


def test_a_forked_child_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids.json"
    env = program_env(
        agent("fork", str(pids_file)), limits=vf.programs.ProgramLimits(timeout=2.0, kill_grace=0.5)
    )
    row = env.evaluate_sync(vf.ScriptedClient("x"), "m", progress=False).rows[0]
    assert row["stop_reason"] == "timeout"
    pids = _pids(pids_file)
    assert pids["pgid"] == pids["parent"]  # the program leads a group of its own
    assert not alive(pids["child"]) and not alive(pids["parent"])
    assert group_members(pids["pgid"]) == []
    assert row["env_state"]["program"]["exit_code"] == -signal.SIGKILL


def test_a_gigabyte_of_output_is_cut_and_the_program_ends() -> None:
    env = program_env(
        agent("flood"), limits=vf.programs.ProgramLimits(timeout=60, max_output_bytes=1000)
    )
    row = env.evaluate_sync(vf.ScriptedClient("x"), "m", progress=False).rows[0]
    stdout = row["env_state"]["program"]["stdout"]
    assert stdout.startswith("x" * 1000)
    assert stdout.endswith(
        f"[output cut: {(1 << 30) + len(chr(10) + 'flood done' + chr(10)) - 1000} bytes beyond the 1000-byte cap]"
    )
    assert len(stdout) < 1200


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
def test_no_orphan_when_the_driver_is_killed_or_interrupted(tmp_path: Path, how: int) -> None:
    pids_file = tmp_path / "pids.json"
    driver = subprocess.Popen(
        [sys.executable, "-m", "tests.programs.driver", str(pids_file)],
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        pids = _pids(pids_file)
        assert alive(pids["child"])
        os.kill(driver.pid, how)
        driver.wait(30)
        wait_until(
            lambda: group_members(pids["pgid"]) == [], "the program's group to be gone", timeout=20
        )
        assert not alive(pids["child"]) and not alive(pids["parent"])
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()


def test_64_programs_at_once_share_one_endpoint() -> None:
    questions = [f"q{i}" for i in range(64)]
    env = program_env(agent("echo"), *questions, max_concurrent=64)
    fds_before = len(os.listdir("/proc/self/fd"))
    out = env.evaluate_sync(
        vf.ScriptedClient(lambda m: m[-1]["content"]), "m", progress=False, max_concurrent=64
    )
    assert [r["error"] for r in out.rows] == [None] * 64
    assert sorted(r["env_state"]["program"]["answer"] for r in out.rows) == sorted(questions)
    assert all(r["reward"] == 1.0 for r in out.rows)
    assert len(os.listdir("/proc/self/fd")) <= fds_before + 8  # nothing left open


def test_a_call_in_flight_when_the_time_is_up_is_cancelled_not_awaited() -> None:
    client = vf.ScriptedClient("late", delay=60)
    env = program_env(agent("echo"), limits=vf.programs.ProgramLimits(timeout=1.0, kill_grace=0.2))
    t0 = time.monotonic()
    row = env.evaluate_sync(client, "m", progress=False).rows[0]
    assert time.monotonic() - t0 < 30  # the run did not wait for the model's 60 s
    assert row["stop_reason"] == "timeout" and client.requests == 1
    assert row["env_state"]["program_calls"] == []  # no answer came: nothing to capture
