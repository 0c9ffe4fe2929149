"""Every model call of a rollout is kept and readable: the request as the server received it,
the answer, the model that answered, usage and times, and each tool call with its arguments,
result and duration; stored with each request's new messages only and rebuilt on read."""

from __future__ import annotations

import asyncio
import json
import time

import verifiers_lite as vf
from tests.helpers.envs import boxed_correct
from verifiers_lite.core.state import row_to_state, state_to_row
from verifiers_lite.core.trajectory import model_calls
from verifiers_lite.results.store import read_rows

TOOL_S = 0.06  # how long the calculator takes: its recorded duration must be at least this


async def calculator(expression: str) -> str:
    """Evaluate an integer expression.

    Args:
        expression: e.g. "3 + 4".
    """
    await asyncio.sleep(TOOL_S)
    a, op, b = expression.split()
    return str({"+": int(a) + int(b), "-": int(a) - int(b), "*": int(a) * int(b)}[op])


def _run(fake_server, tmp_path, latency_ms: float = 30):
    fake_server.configure(latency_ms=latency_ms)
    rows = [{"question": f"What is {i} + {i * 3}?", "answer": str(i * 4)} for i in range(1, 4)]
    env = vf.ToolEnv(
        tools=[calculator],
        dataset=rows,
        rubric=vf.Rubric([boxed_correct]),
        system_prompt="Use the calculator. " * 20,
    )
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-tool",
        sampling_args={"temperature": 0.3, "max_tokens": 64},
        results_path=str(tmp_path / "run"),
        max_concurrent=1,  # one request at a time: the server's log lists them in call order
        progress=False,
    )
    return out, read_rows(tmp_path / "run" / "results.jsonl")


def test_each_call_keeps_what_the_server_received_and_answered(fake_server, tmp_path):
    out, saved = _run(fake_server, tmp_path)
    received = fake_server.requests()
    assert [r["error"] for r in saved] == [None] * 3
    by_question = {}
    for body in received:
        by_question.setdefault(body["messages"][1]["content"], []).append(body)
    for row in saved:
        calls = model_calls(row)
        bodies = by_question[row["prompt"][-1]["content"]]
        assert len(calls) == len(bodies) == row["turns"] == 2
        for call, body in zip(calls, bodies, strict=True):
            assert call["request"]["messages"] == body["messages"]  # as the server got them
            sent = call["request"]["sampling_args"]
            assert (sent["temperature"], sent["max_tokens"]) == (0.3, 64)
            assert (body["temperature"], body["max_tokens"]) == (0.3, 64)
            assert call["model"] == "fake-tool"
            assert call["timing"]["latency_ms"] >= 30  # the server waited 30 ms per request
            assert call["timing"]["queue_ms"] >= 0
        # usage per call adds up to the row's
        assert sum(c["usage"]["prompt_tokens"] for c in calls) == row["usage"]["prompt_tokens"]
        assert (
            sum(c["usage"]["completion_tokens"] for c in calls)
            == (row["usage"]["completion_tokens"])
        )
        first, second = calls
        assert first["finish_reason"] == "stop" and first["message"]["tool_calls"]
        (tool,) = first["tool_calls"]
        asked = first["message"]["tool_calls"][0]
        assert tool["name"] == "calculator" and tool["arguments"] == asked["function"]["arguments"]
        a, b = json.loads(tool["arguments"])["expression"].split(" + ")
        assert tool["result"] == str(int(a) + int(b)) and tool["error"] is None
        assert tool["duration_ms"] >= TOOL_S * 1000
        # the tool ran after the first call answered, and the second call after the tool
        end_first = first["timing"]["start_ms"] + first["timing"]["latency_ms"]
        assert tool["start_ms"] >= end_first - 1
        assert second["timing"]["start_ms"] >= tool["start_ms"] + tool["duration_ms"] - 1
        assert first["env"]["duration_ms"] >= tool["duration_ms"] - 1
        assert second["message"] == row["completion"][-1]


def test_the_growing_prompt_is_stored_once(fake_server, tmp_path):
    out, saved = _run(fake_server, tmp_path)
    line = (tmp_path / "run" / "results.jsonl").read_text().splitlines()[0]
    row = json.loads(line)
    system = row["prompt"][0]["content"]
    # the system prompt went out with both calls, yet the line holds it once (the row's prompt)
    assert line.count(json.dumps(system)[1:-1]) == 1
    whole = json.dumps(model_calls(row))
    assert whole.count(json.dumps(system)[1:-1]) == 2
    # the second call's request holds only what was new: the answer and the tool's reply
    stored = row["trajectory"][1]["request"]
    assert stored["messages_kept"] == 3  # system, user, the first answer
    assert [m["role"] for m in stored["messages_new"]] == ["tool"]


def test_rescoring_path_keeps_every_call(fake_server, tmp_path):
    """A row back to its State and to a row again (a re-score, a rollout server's row) is the
    same row: the calls survive the round trip."""
    out, saved = _run(fake_server, tmp_path)
    for row in saved:
        state = row_to_state(row, model="fake-tool", sampling_args={})
        assert (
            state["trajectory"][1]["request"]["messages"]
            == model_calls(row)[1]["request"]["messages"]
        )
        again = state_to_row(state)
        assert again["trajectory"] == row["trajectory"]


def test_a_row_of_an_older_run_still_reads(tmp_path):
    """Rows written before calls were kept hold only finish reasons: they read as such."""
    row = {
        "prompt": [{"role": "user", "content": "hi"}],
        "completion": [{"role": "assistant", "content": "hello"}],
        "finish_reasons": ["stop"],
    }
    assert model_calls(row) == [
        {"finish_reason": "stop", "message": {"role": "assistant", "content": "hello"}}
    ]


def test_queue_time_is_apart_from_latency(fake_server, tmp_path):
    """With one request slot and two rollouts at once, a call's wait for the slot is its queue
    time, not its latency."""
    fake_server.configure(latency_ms=80)
    env = vf.SingleTurnEnv(
        dataset=[{"question": "What is 1 + 2?", "answer": "3"}], rubric=vf.Rubric([boxed_correct])
    )
    t0 = time.perf_counter()
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=2,
        max_concurrent=1,
        progress=False,
    )
    assert time.perf_counter() - t0 >= 0.16
    timings = sorted((model_calls(r)[0]["timing"] for r in out.rows), key=lambda t: t["queue_ms"])
    assert all(t["latency_ms"] >= 80 for t in timings)
    assert timings[0]["queue_ms"] < 40 and timings[1]["queue_ms"] >= 60


def test_each_turns_prompt_ids_are_stored_as_its_new_ids(tmp_path):
    from verifiers_lite.rollout import TokenClient
    from verifiers_lite.rollout.testing import ScriptedSampler, toy_template
    from verifiers_lite.train.validate import validate_training_rows

    class Echo(vf.MultiTurnEnv):
        async def env_response(self, messages, state):
            return [{"role": "user", "content": "again"}]

    template = toy_template()
    sampler = ScriptedSampler(template, lambda prompt: "ok")
    env = Echo(dataset=[{"question": "q", "answer": "a"}], max_turns=4)
    env.evaluate_sync(
        TokenClient(sampler, template), "toy", progress=False, results_path=tmp_path / "run"
    )
    (row,) = read_rows(tmp_path / "run" / "results.jsonl")
    prompts = [p for call in sampler.calls for p in call]  # what the sampler was given, in turn
    stored = [s["tokens"] for s in row["trajectory"]]
    assert [len(t["prompt_ids_new"]) for t in stored[1:]] == [
        len(b) - len(a) - len(s["completion_ids"])
        for a, b, s in zip(prompts, prompts[1:], stored, strict=False)
    ]
    assert [c["tokens"]["prompt_ids"] for c in model_calls(row)] == prompts
    assert validate_training_rows([row]) == 1
