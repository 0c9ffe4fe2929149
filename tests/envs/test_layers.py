"""The three layers: subclass writes rollout() only; run_rollout/run_group/generate are final."""

from __future__ import annotations

import pytest

import verifiers_lite as vf
from tests.helpers.envs import arithmetic_rows, boxed_correct


class EchoTwiceEnv(vf.Environment):
    """A subclass that writes only rollout(): two model calls, keeps both answers."""

    async def rollout(self, input, client, model, sampling_args=None):
        state = self.init_state(input, model, sampling_args)
        for _ in range(2):
            response = await self.get_model_response(client, model, state["prompt"], state)
            state["completion"].append(response.message)
            state["turns"] += 1
        state["stop_reason"] = "stop"
        return state


def test_subclass_writing_only_rollout_runs_and_is_scored(fake_server):
    env = EchoTwiceEnv(
        dataset=[{"question": "hello", "answer": "hello"}],
        rubric=vf.Rubric([lambda completion, answer: float(completion[-1]["content"] == answer)]),
    )
    out = env.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-echo", progress=False)
    row = out.rows[0]
    assert row["turns"] == 2 and len(row["completion"]) == 2
    assert row["reward"] == 1.0
    assert row["usage"]["completion_tokens"] > 0
    assert fake_server.stats()["requests"] == 2


@pytest.mark.parametrize(
    "method", ["run_rollout", "run_group", "generate", "evaluate", "evaluate_sync"]
)
def test_overriding_a_final_method_raises_type_error(method):
    with pytest.raises(TypeError, match=f"overrides Environment.{method}, which is final"):
        type("Sneaky", (vf.SingleTurnEnv,), {method: lambda self, *a, **k: None})


def test_init_state_is_a_fresh_workbench():
    env = vf.SingleTurnEnv(
        dataset=arithmetic_rows(1), tool_defs=[{"type": "function", "function": {"name": "t"}}]
    )
    inp = {
        "prompt": [{"role": "user", "content": "hi"}],
        "answer": "1",
        "info": '{"a": {"b": 2}}',
        "example_id": 3,
    }
    s1 = env.init_state(inp, "m")
    s2 = env.init_state(inp, "m")
    assert s1["info"] == {"a": {"b": 2}}  # JSON string parsed
    assert inp["info"] == '{"a": {"b": 2}}'  # input untouched
    assert s1["trajectory"] == [] and s1["completion"] == [] and s1["reward"] is None
    assert s1["trajectory_id"] != s2["trajectory_id"]
    assert s1["tool_defs"][0]["function"]["name"] == "t"
    s1["prompt"][0]["content"] = "changed"
    assert inp["prompt"][0]["content"] == "hi"  # deep copy
    with_tools = dict(inp, info={"tool_defs": [{"type": "function", "function": {"name": "own"}}]})
    assert env.init_state(with_tools, "m")["tool_defs"][0]["function"]["name"] == "own"


async def test_run_rollout_directly_with_a_plain_async_openai_client(fake_server):
    openai = pytest.importorskip("openai")
    client = openai.AsyncOpenAI(base_url=fake_server.base_url, api_key="x")
    env = vf.SingleTurnEnv(dataset=arithmetic_rows(2), rubric=vf.Rubric([boxed_correct]))
    row = await env.run_rollout(env.get_dataset()[1], client, "fake-arith", {"temperature": 0})
    assert row["example_id"] == 1 and row["stop_reason"] == "stop"
    assert row["reward"] in (0.0, 1.0) and row["error"] is None
    assert "boxed" in row["completion"][0]["content"]


def test_chat_client_from_an_async_openai_client(fake_server):
    openai = pytest.importorskip("openai")
    oa = openai.AsyncOpenAI(
        base_url=fake_server.base_url,
        api_key="sk-x",
        timeout=12.0,
        default_headers={"X-Team": "rl"},
    )
    lean = vf.ChatClient.from_openai(oa)
    assert lean.base_url == fake_server.base_url and lean.api_key == "sk-x" and lean.timeout == 12.0
    assert lean._headers["X-Team"] == "rl" and lean._headers["Authorization"] == "Bearer sk-x"
    out = vf.SingleTurnEnv(dataset=arithmetic_rows(3)).evaluate_sync(
        lean, "fake-arith", progress=False
    )
    assert [r["error"] for r in out.rows] == [None] * 3
