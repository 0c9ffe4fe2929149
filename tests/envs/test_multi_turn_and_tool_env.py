"""MultiTurnEnv stop reasons and ToolEnv tool handling."""

from __future__ import annotations

import asyncio
import json

import verifiers_lite as vf
from tests.helpers.envs import boxed_correct
from tests.helpers.tool_player import add
from verifiers_lite.core.model_client import ChatResponse


class ScriptedClient:
    """A model client replaying assistant messages, for exact multi-turn tests."""

    def __init__(self, replies, finish="stop"):
        self.replies = list(replies)
        self.finish = finish
        self.seen: list[list[dict]] = []

    async def chat(self, model, messages, sampling_args=None, tools=None):
        self.seen.append([dict(m) for m in messages])
        reply = self.replies.pop(0)
        message = reply if isinstance(reply, dict) else {"role": "assistant", "content": reply}
        return ChatResponse(message=message, finish_reason=self.finish)


class Countdown(vf.MultiTurnEnv):
    async def is_completed(self, messages, state):
        return "done" in (messages[-1].get("content") or "")

    def env_response(self, messages, state):  # sync env_response is accepted too
        if "finish" in (messages[-1].get("content") or ""):
            state["done"] = True
            return [{"role": "user", "content": "Well done."}]
        return [{"role": "user", "content": "continue"}]


def _run(env, client):
    return asyncio.run(
        env.run_rollout(
            {"prompt": [{"role": "user", "content": "go"}], "example_id": 0}, client, "m"
        )
    )


def test_stop_reasons_of_multi_turn_rollouts():
    env = Countdown(max_turns=3)
    assert _run(env, ScriptedClient(["a", "b", "c", "d"]))["stop_reason"] == "max_turns"
    row = _run(env, ScriptedClient(["a", "done"]))
    assert row["stop_reason"] == "env_done" and row["turns"] == 2
    row = _run(env, ScriptedClient(["finish"]))
    assert row["stop_reason"] == "env_done" and row["completion"][-1]["content"] == "Well done."
    assert _run(env, ScriptedClient(["a"], finish="length"))["stop_reason"] == "length"
    assert set(vf.ERROR_CATEGORIES) >= {"env_error", "model_timeout"}


def test_env_response_messages_are_validated():
    class BadReply(vf.MultiTurnEnv):
        async def env_response(self, messages, state):
            return [{"content": "no role"}]

    row = _run(BadReply(max_turns=3), ScriptedClient(["a", "b"]))
    assert row["error"]["category"] == "env_error" and "missing 'role'" in row["error"]["message"]


async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "slept"


def explode() -> str:
    """Always fails."""
    raise RuntimeError("kaboom")


def _call(name, args, call_id):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def test_tool_env_answers_every_call_and_never_raises():
    env = vf.ToolEnv(tools=[add, slow, explode], tool_timeout=0.2, max_turns=4)
    assert [t["function"]["name"] for t in env.tool_defs] == ["add", "slow", "explode"]
    assert env.tool_defs[0]["function"]["parameters"]["properties"]["a"] == {
        "type": "integer",
        "description": "first addend",
    }
    calls = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            _call("add", json.dumps({"a": 2, "b": 3}), "c1"),
            _call("nope", "{}", "c2"),
            _call("add", "{bad json", "c3"),
            _call("add", json.dumps({"a": 1}), "c4"),
            _call("slow", json.dumps({"seconds": 5}), "c5"),
            _call("explode", "{}", "c6"),
        ],
    }
    client = ScriptedClient([calls, "The sum is 5."])
    row = _run(env, client)
    tool_msgs = [m for m in row["completion"] if m["role"] == "tool"]
    by_id = {m["tool_call_id"]: m["content"] for m in tool_msgs}
    assert by_id["c1"] == "5"
    assert "unknown_tool" in by_id["c2"] and "'nope'" in by_id["c2"]
    assert "bad_arguments" in by_id["c3"]
    assert "bad_arguments" in by_id["c4"]
    assert "timeout" in by_id["c5"]
    assert "exception" in by_id["c6"] and "kaboom" in by_id["c6"]
    assert row["stop_reason"] == "stop" and row["turns"] == 2 and row["error"] is None


def test_tool_env_against_the_fake_server(fake_server):
    def calculator(expression: str) -> str:
        """Evaluate a + b."""
        a, _, b = expression.split()
        return str(int(a) + int(b))

    env = vf.ToolEnv(
        tools=[calculator],
        dataset=[{"question": f"What is {i} + 5?", "answer": str(i + 5)} for i in range(4)],
        rubric=vf.Rubric([boxed_correct]),
    )
    out = env.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-tool", progress=False)
    assert [r["reward"] for r in out.rows] == [1.0] * 4
    assert all(r["turns"] == 2 and r["completion"][1]["role"] == "tool" for r in out.rows)


def test_rollout_timeout_bounds_a_hanging_environment():
    import time

    class Hangs(vf.MultiTurnEnv):
        async def env_response(self, messages, state):
            await asyncio.sleep(3600)

    env = Hangs(max_turns=3, rollout_timeout=0.3)
    t0 = time.monotonic()
    row = _run(env, ScriptedClient(["a"]))
    assert time.monotonic() - t0 < 60  # the 0.3 s bound, not the hour-long hang
    assert (
        row["error"]["category"] == "rollout_timeout"
        and "rollout_timeout=0.3s" in row["error"]["message"]
    )
    assert row["stop_reason"] == "error" and row["reward"] is None
    import pytest

    with pytest.raises(ValueError, match="rollout_timeout must be a positive number"):
        Hangs(rollout_timeout=0)
