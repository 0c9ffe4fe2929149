"""Limits and hygiene: every program ends within its limit and leaves no process behind."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import verifiers_lite as vf
from tests.programs.helpers import ROOT, agent, alive, child_env, group_members, program_env
from verifiers_lite.core.trajectory import model_calls
from verifiers_lite.testing.waiting import wait_until


def _solver(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The calculator agent's model: the tool on the question, then the tool's result."""
    last = messages[-1]
    if last["role"] == "tool":
        return {"content": f"The answer is \\boxed{{{last['content']}}}."}
    expression = re.search(r"What is (.+)\?", str(last["content"])).group(1)  # type: ignore[union-attr]
    return {
        "content": "",
        "tool_calls": [{"name": "calculator", "arguments": {"expression": expression}}],
    }


def _refusal(row: dict[str, Any]) -> dict[str, Any]:
    """The error body the program printed for the call it was refused."""
    status, body = row["env_state"]["program"]["stdout"].split(" ", 1)
    assert status == "400"
    return json.loads(body)["error"]


def test_the_call_past_the_turn_limit_is_refused_and_the_rollout_scored() -> None:
    env = program_env(agent("calls_forever", "exit"), limits=vf.Limits(turns=3), kill_grace=60)
    row = env.evaluate_sync(vf.ScriptedClient("again"), "m", progress=False).rows[0]
    assert row["error"] is None, row["error"]
    assert row["stop_reason"] == "turn_limit" and row["turns"] == 3
    assert _refusal(row)["code"] == "turn_limit"
    # It ended by itself on the error (well within its grace), and was scored as it stands.
    program = row["env_state"]["program"]
    assert program["stopped"] == "turn_limit" and program["exit_code"] == 0
    assert row["reward"] == 0.0


def test_a_program_that_ignores_the_refusal_is_stopped() -> None:
    env = program_env(agent("calls_forever", "hang"), limits=vf.Limits(turns=2), kill_grace=0.2)
    row = env.evaluate_sync(vf.ScriptedClient("again"), "m", progress=False).rows[0]
    assert row["stop_reason"] == "turn_limit" and row["turns"] == 2 and row["error"] is None
    assert row["env_state"]["program"]["exit_code"] == -signal.SIGTERM


def test_the_call_past_the_token_limit_is_refused() -> None:
    # ScriptedClient counts words: 1 prompt word ("again") per call, the answer's words capped
    # by the max_tokens the limit leaves.
    env = program_env(agent("calls_forever", "exit"), limits=vf.Limits(total_tokens=7))
    row = env.evaluate_sync(vf.ScriptedClient("two words"), "m", progress=False).rows[0]
    assert row["stop_reason"] == "token_limit" and row["error"] is None
    assert _refusal(row)["code"] == "token_limit"
    calls = model_calls(row)
    used = [c["usage"]["prompt_tokens"] + c["usage"]["completion_tokens"] for c in calls]
    assert sum(used) == row["usage"]["prompt_tokens"] + row["usage"]["completion_tokens"] <= 7
    # Each call's max_tokens was what the limit left: 7, less what was spent, less the next
    # prompt's estimate (the last call's prompt and answer).
    spent = 0
    for i, call in enumerate(calls):
        estimate = used[i - 1] if i else 0
        assert call["request"]["sampling_args"]["max_tokens"] == 7 - spent - estimate
        spent += used[i]


def test_the_call_past_the_tool_call_limit_is_refused() -> None:
    # The calculator agent asks for the tool once; a run's limits reach the program's rollout.
    env = vf.load_environment("calculator_agent", num_examples=1)
    out = env.evaluate_sync(
        vf.ScriptedClient(_solver), "m", progress=False, limits=vf.Limits(tool_calls=0)
    )
    (row,) = out.rows
    assert row["stop_reason"] == "tool_limit" and row["turns"] == 1, row["error"]
    assert row["error"] is None and row["reward"] == 0.0


def test_the_call_past_the_cost_limit_is_refused() -> None:
    # At 1 USD per token each way, the first call (3 tokens) spends the 2.5 USD.
    env = program_env(agent("calls_forever", "exit"), limits=vf.Limits(cost_usd=2.5))
    out = env.evaluate_sync(
        vf.ScriptedClient("two words"),
        "priced",
        progress=False,
        prices={"priced": vf.ModelPrice(input=1e6, output=1e6)},
    )
    (row,) = out.rows
    assert row["stop_reason"] == "cost_limit" and row["turns"] == 1 and row["error"] is None
    assert _refusal(row)["code"] == "cost_limit"
    assert row["cost_usd"] == pytest.approx(3.0)
    assert row["usage"]["prompt_tokens"] + row["usage"]["completion_tokens"] == 3


def _pids(path: Path) -> dict[str, int]:
    return json.loads(wait_until(lambda: path.exists() and path.read_text(), f"{path} written"))


def test_a_spinning_program_is_stopped_at_its_time_limit() -> None:
    env = program_env(agent("spin"), limits=vf.Limits(time_s=1.5), kill_grace=0.5)
    t0 = time.monotonic()
    row = env.evaluate_sync(vf.ScriptedClient("x"), "m", progress=False).rows[0]
    assert time.monotonic() - t0 < 1.5 + 0.5 + 15  # a sanity bound: the limit, then slack
    assert row["stop_reason"] == "time_limit" and row["error"] is None
    assert row["env_state"]["program"]["seconds"] >= 1.5
    assert row["env_state"]["program"]["exit_code"] == -signal.SIGTERM


def test_a_forked_child_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids.json"
    env = program_env(agent("fork", str(pids_file)), limits=vf.Limits(time_s=2.0), kill_grace=0.5)
    row = env.evaluate_sync(vf.ScriptedClient("x"), "m", progress=False).rows[0]
    assert row["stop_reason"] == "time_limit"
    pids = _pids(pids_file)
    assert pids["pgid"] == pids["parent"]  # the program leads a group of its own
    assert not alive(pids["child"]) and not alive(pids["parent"])
    assert group_members(pids["pgid"]) == []
    assert row["env_state"]["program"]["exit_code"] == -signal.SIGKILL


def test_a_gigabyte_of_output_is_cut_and_the_program_ends() -> None:
    env = program_env(agent("flood"), limits=vf.Limits(time_s=60), max_output_bytes=1000)
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
        # faulthandler: a driver that does not end dumps every thread's stack on SIGABRT
        [sys.executable, "-X", "faulthandler", "-m", "tests.programs.driver", str(pids_file)],
        cwd=ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        pids = _pids(pids_file)
        assert alive(pids["child"])
        os.kill(driver.pid, how)
        try:
            driver.wait(30)
        except subprocess.TimeoutExpired:
            os.kill(driver.pid, signal.SIGABRT)
            _, err = driver.communicate(timeout=30)
            pytest.fail(
                f"the driver outlived {how!r} by 30 s; its threads:\n{err.decode()[-6000:]}"
            )
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
    env = program_env(agent("echo"), limits=vf.Limits(time_s=1.0), kill_grace=0.2)
    t0 = time.monotonic()
    row = env.evaluate_sync(client, "m", progress=False).rows[0]
    assert time.monotonic() - t0 < 30  # the run did not wait for the model's 60 s
    assert row["stop_reason"] == "time_limit" and client.requests == 1
    assert row["env_state"]["program_calls"] == []  # no answer came: nothing to capture
