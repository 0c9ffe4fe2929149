"""The classic multi-turn loop: setup_state first, stop conditions before every model turn (so
env_response never answers the turn that ended the rollout), final_env_response, replies as
messages or (messages, state), an older is_completed(messages, state), cleanup before scoring,
teardown, timeouts, the num_turns metric, and rows left with plain dict messages."""

from __future__ import annotations

import asyncio

import pytest
from datasets import Dataset

import verifiers_lite.classic as vf
from tests.classic.recording import RecordingClient

ROWS = [{"question": "start", "answer": "3"}]


def _count_turns(messages, tools):
    return str(sum(m["role"] == "assistant" for m in messages) + 1)  # "1", "2", "3"...


def _run(env, reply=_count_turns):
    client = RecordingClient(reply)
    out = env.evaluate_sync(client, "m", progress=False)
    return out.rows[0], client


class Counting(vf.MultiTurnEnv):
    """Replies "go on"; stops when the model says the answer; records the order of calls."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.calls = []

    async def setup_state(self, state, **kwargs):
        self.calls.append("setup")
        state["replies"] = 0
        return state

    @vf.stop
    async def said_answer(self, state) -> bool:
        done = (
            bool(state["trajectory"])
            and state["trajectory"][-1]["completion"][-1].content == state["answer"]
        )
        self.calls.append(f"stop?{len(state['trajectory'])}")
        return done

    async def env_response(self, messages, state, **kwargs):
        self.calls.append(f"reply{len(state['trajectory'])}")
        state["replies"] += 1
        return [vf.UserMessage(content="go on")]

    @vf.cleanup
    async def before_scoring(self, state):
        self.calls.append("cleanup")
        state["cleaned"] = 1.0


def test_order_setup_stop_conditions_env_response_cleanup_then_scoring():
    def scored_after_cleanup(state) -> float:
        return state["cleaned"]

    env = Counting(dataset=Dataset.from_list(ROWS), rubric=vf.Rubric(funcs=[scored_after_cleanup]))
    row, client = _run(env)
    assert env.calls == [
        "setup",
        "stop?0",
        "stop?1",
        "reply1",
        "stop?2",
        "reply2",
        "stop?3",
        "cleanup",
    ]
    assert len(client.requests) == 3
    assert [m["content"] for m in row["completion"]] == ["1", "go on", "2", "go on", "3"]
    assert row["reward"] == 1.0 and row["metrics"] == {
        "scored_after_cleanup": 1.0,
        "num_turns": 3.0,
    }
    assert row["stop_reason"] == "env_done" and row["env_state"]["stop_condition"] == "said_answer"
    assert all(type(m) is dict for m in row["prompt"] + row["completion"])


def test_rows_count_their_model_turns_as_num_turns_does():
    """A row's ``turns`` (DataFrame column, viewer, plots) is its model turns: three requests."""
    env = Counting(dataset=Dataset.from_list(ROWS * 2))
    out = env.evaluate_sync(RecordingClient(_count_turns), "m", progress=False)
    assert [r["turns"] for r in out.rows] == [3, 3]
    frame = out.to_pandas()
    assert frame["turns"].tolist() == [3, 3] and frame["num_turns"].tolist() == [3.0, 3.0]


def test_max_turns_stops_before_env_response():
    env = Counting(dataset=Dataset.from_list([{"question": "q", "answer": "never"}]), max_turns=2)
    row, client = _run(env)
    assert len(client.requests) == 2 and "reply2" not in env.calls
    assert row["stop_reason"] == "max_turns" and row["metrics"]["num_turns"] == 2.0


class FinalReply(vf.MultiTurnEnv):
    async def env_response(self, messages, state, **kwargs):
        state["final_env_response"] = [{"role": "user", "content": "game over"}]
        return state["final_env_response"]


def test_final_env_response_ends_the_rollout_with_those_messages_and_no_model_turn():
    row, client = _run(FinalReply(dataset=Dataset.from_list(ROWS), max_turns=5))
    assert len(client.requests) == 1
    assert [m["content"] for m in row["completion"]] == ["1", "game over"]
    assert row["env_state"]["stop_condition"] == "has_final_env_response"


class OlderStyle(vf.MultiTurnEnv):
    """Classic code before stop decorators: is_completed(messages, state), (messages, state) replies."""

    async def is_completed(self, messages, state, **kwargs) -> bool:
        return sum(m["role"] == "assistant" for m in messages) >= 2

    async def env_response(self, messages, state, **kwargs):
        state["seen"] = len(messages)
        return [{"role": "user", "content": "more"}], state


def test_older_is_completed_and_tuple_replies(monkeypatch):
    """verifiers 0.3.1 refuses both (its mode here too); the lenient mode runs them."""
    with pytest.raises(TypeError, match=r"is_completed\(\) missing 1 required positional") as info:
        OlderStyle(dataset=Dataset.from_list(ROWS), max_turns=10)
    assert "VF_CLASSIC_MODE=lenient" in info.value.__notes__[0]
    monkeypatch.setenv("VF_CLASSIC_MODE", "lenient")
    with pytest.warns(vf.ClassicDeviationWarning) as warned:
        row, client = _run(OlderStyle(dataset=Dataset.from_list(ROWS), max_turns=10))
    assert [str(w.message).rpartition(": ")[2] for w in warned] == [
        "is_completed(messages, state) of older classic code",
        "is_completed(messages, state) of older classic code; env_response returning (messages, state)",
    ]
    assert len(client.requests) == 2
    assert [m["content"] for m in row["completion"]] == ["1", "more", "2"]
    assert row["env_state"]["seen"] == 2  # the prompt and the first answer
    assert row["env_state"]["stop_condition"] == "is_completed"


class Slow(vf.MultiTurnEnv):
    async def env_response(self, messages, state, **kwargs):
        await asyncio.Event().wait()  # never answers


def test_a_timed_out_rollout_is_kept_and_scored():
    row, _ = _run(
        Slow(
            dataset=Dataset.from_list(ROWS),
            timeout_seconds=0.2,
            rubric=vf.Rubric(funcs=[lambda completion: 1.0]),
        )
    )
    assert row["error"] is None and row["reward"] == 1.0
    assert row["env_state"]["stop_condition"] == "timeout_reached"


def test_teardown_handlers_run_with_the_rubric_teardown():
    class WithTeardown(vf.SingleTurnEnv):
        torn = []

        @vf.teardown
        async def close_things(self):
            self.torn.append("env")

    env = WithTeardown(dataset=Dataset.from_list(ROWS))
    asyncio.run(env.teardown())
    assert WithTeardown.torn == ["env"]


def test_single_turn_env_sends_the_environment_sampling_args_and_a_few_shot_prompt():
    shots = [{"role": "user", "content": "1+1"}, {"role": "assistant", "content": "2"}]
    env = vf.SingleTurnEnv(
        dataset=Dataset.from_list(ROWS),
        system_prompt="sys",
        few_shot=shots,
        sampling_args={"stop": ["</answer>"], "n": 1, "extra_body": {}},
    )
    row, client = _run(env)
    request = client.requests[0]
    assert [m["content"] for m in request["messages"]] == ["sys", "1+1", "2", "start"]
    assert request["sampling_args"]["stop"] == ["</answer>"]
    assert "n" not in request["sampling_args"] and "extra_body" not in request["sampling_args"]
    assert row["stop_reason"] == "stop"


def test_teardown_runs_when_the_process_ends(tmp_path):
    """Classic teardown runs once the environment's process exits (after its runs)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    marker = tmp_path / "torn_down"
    child = f"""
from datasets import Dataset
import verifiers_lite.classic as vf
from tests.classic.recording import RecordingClient

class Env(vf.SingleTurnEnv):
    @vf.teardown
    async def close(self):
        open({str(marker)!r}, "w").write("done")

env = Env(dataset=Dataset.from_list([{{"question": "q", "answer": "a"}}]))
env.evaluate_sync(RecordingClient(lambda m, t: "a"), "m", progress=False)
assert not __import__("os").path.exists({str(marker)!r})  # not before the end
"""
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-c", child],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert marker.read_text() == "done"
