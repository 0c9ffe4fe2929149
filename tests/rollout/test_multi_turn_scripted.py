"""MultiTurnRollout with a scripted sampler and a toy ChatML tokenizer: deterministic tool use."""

from __future__ import annotations

import copy
import json
import re
import time

import pytest

from tests.rollout.rollout_invariants import check_trajectory, unrolled
from verifiers_lite.rollout import IGNORE_INDEX, MultiTurnRollout, SamplingParams, ToolManager
from verifiers_lite.rollout.testing import ScriptedSampler, toy_template
from verifiers_lite.rollout.trajectory import STOP_REASONS, is_truncated


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def fail() -> str:
    """Always raises."""
    raise RuntimeError("kaput")


def sleepy() -> str:
    """Sleeps too long."""
    time.sleep(1.0)
    return "late"


def call(name: str, **args: object) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': args})}\n</tool_call>"


def tool_turns(prompt: str) -> int:
    return prompt.count("<|im_start|>tool")


def make(respond, *, max_turns=6, cap=None, logprobs=0, tools=(add, fail, sleepy), **kw):
    template = toy_template()
    sampler = ScriptedSampler(template, respond)
    rollout = MultiTurnRollout(
        sampler,
        template,
        ToolManager(list(tools), timeout=0.2),
        SamplingParams(max_tokens=kw.pop("max_tokens", 200), logprobs=logprobs),
        max_turns=max_turns,
        max_trajectory_tokens=cap,
        **kw,
    )
    return rollout, sampler, template


def convo(q: str = "What is 2+3?") -> dict:
    return {"messages": [{"role": "user", "content": q}], "id": q}


def adder(prompt: str) -> str:
    # Call add once, then answer with the tool's result.
    if tool_turns(prompt) == 0:
        return "Let me add. " + call("add", a=2, b=3)
    return "The answer is " + re.findall(r"<\|im_start\|>tool\n(.*?)<\|im_end\|>", prompt)[-1]


def test_tool_use_round_trip_and_invariants() -> None:
    rollout, sampler, template = make(adder)
    inp = [convo(), convo("again")]
    before = copy.deepcopy(inp)
    out = rollout(inp)
    assert inp == before  # inputs not mutated
    assert len(sampler.calls) == 2  # one batched sample() per turn
    for t in out:
        assert t["stop_reason"] == "stop" and t["turns"] == 2 and not t["truncated"]
        assert t["messages"][-1]["content"] == "The answer is 5"
        tool_msg = t["messages"][2]
        assert tool_msg == {
            "role": "tool",
            "tool_call_id": "call_1_0",
            "name": "add",
            "content": "5",
        }
        assert t["id"] in ("What is 2+3?", "again")
        check_trajectory(
            t,
            template,
            sampler_prompts=[c[out.index(t)] for c in sampler.calls],
            tools=rollout.tool_manager.schemas,
        )
    # The separator after <|im_end|> that the model never samples is in the bridge.
    ids, labels, _ = unrolled(out[0])
    end = ids.index(2, out[0]["prompt_length"])
    assert template.decode(ids[end : end + 3]) == "<|im_end|>\n<|im_start|>"
    assert labels[end + 1] == IGNORE_INDEX


def test_errors_become_tool_messages() -> None:
    def respond(prompt: str) -> str:
        if tool_turns(prompt) == 0:
            return (
                call("nope")
                + call("add", a=1)
                + call("fail")
                + call("sleepy")
                + "<tool_call>{not json</tool_call>"
                + call("add", a=1, b=1)
            )
        return "done"

    rollout, sampler, template = make(respond, max_tokens=1000)
    t = rollout([convo()])[0]
    calls = t["messages"][1]["tool_calls"]
    answers = t["messages"][2:8]
    assert [a["tool_call_id"] for a in answers] == [c["id"] for c in calls]
    assert [e["error"] for e in t["tool_errors"]] == [
        "unknown_tool",
        "bad_arguments",
        "exception",
        "timeout",
        "parse_error",
    ]
    assert "kaput" in answers[2]["content"] and "timed out" in answers[3]["content"]
    assert calls[4]["function"]["name"] == "invalid_tool_call"
    assert answers[5]["content"] == "2"
    assert t["stop_reason"] == "stop"
    check_trajectory(t, template, tools=rollout.tool_manager.schemas)


def test_max_turns_answers_calls_without_generation_prompt() -> None:
    rollout, sampler, template = make(lambda p: call("add", a=1, b=1), max_turns=3)
    t = rollout([convo()])[0]
    assert t["turns"] == 3 and t["stop_reason"] == "max_turns" and t["truncated"]
    assert len(sampler.calls) == 3
    assert t["messages"][-1]["role"] == "tool"
    check_trajectory(t, template, tools=rollout.tool_manager.schemas)
    assert template.decode(unrolled(t)[0]).endswith("<|im_start|>tool\n2<|im_end|>\n")


def test_length_stop_is_truncated_and_not_dispatched() -> None:
    rollout, sampler, template = make(lambda p: call("add", a=1, b=1), max_tokens=10)
    t = rollout([convo()])[0]
    assert t["stop_reason"] == "length" and t["truncated"] and t["turns"] == 1
    assert "tool_calls" not in t["messages"][-1]
    check_trajectory(t, template, tools=rollout.tool_manager.schemas)


@pytest.mark.parametrize("cap", [60, 933, 1000, 1061, 1100, 1279, 1300, 5000])
def test_max_trajectory_tokens_is_a_real_cap(cap: int) -> None:
    rollout, sampler, template = make(
        lambda p: "x" * 30 + call("add", a=1, b=2), cap=cap, max_tokens=120
    )
    t = rollout([convo()])[0]
    assert len(unrolled(t)[0]) <= cap
    check_trajectory(
        t,
        template,
        sampler_prompts=[c[0] for c in sampler.calls],
        tools=rollout.tool_manager.schemas,
        cap=cap,
    )
    if t["stop_reason"] == "length":
        assert t["truncated"]


def test_results_do_not_depend_on_batch_composition() -> None:
    def respond(prompt: str) -> str:
        n = len(re.findall(r"user\n(\w+)", prompt)[0])
        return call("add", a=n, b=1) if tool_turns(prompt) < n % 3 else f"len {n}"

    qs = ["a", "bb", "ccc", "dddd", "eeeee"]
    rollout, _, _ = make(respond)
    together = rollout([convo(q) for q in qs])
    alone = [rollout([convo(q)])[0] for q in qs]
    assert together == alone
    assert [t["turns"] for t in together] == [2, 3, 1, 2, 3]


def test_no_logprobs_when_not_requested_and_stop_reason_set() -> None:
    rollout, _, template = make(adder, logprobs=None)
    t = rollout([convo()])[0]
    # No logprob was asked for: 0.0 on every token (the scripted sampler's are all below 0).
    assert t["completion_logprobs"] == [0.0] * len(t["completion_ids"]) and t["completion_ids"]
    check_trajectory(t, template, tools=rollout.tool_manager.schemas, logprobs_asked=False)
    assert t["stop_reason"] in STOP_REASONS and t["truncated"] == is_truncated(t["stop_reason"])


def test_bare_message_lists_and_per_trajectory_tool_managers() -> None:
    template = toy_template()
    sampler = ScriptedSampler(template, adder)
    rollout = MultiTurnRollout(sampler, template, sampling_params=SamplingParams(max_tokens=200))
    out = rollout(
        [[{"role": "user", "content": "q"}], convo()], tool_manager=[None, ToolManager([add])]
    )
    assert out[0]["stop_reason"] == "stop" and out[0]["turns"] == 1  # no tools: the call is text
    assert out[1]["turns"] == 2


def test_traces_written_with_ok_fail_prefix_and_unique_names(tmp_path) -> None:
    rollout, _, _ = make(
        adder,
        trace_dir=tmp_path,
        success_callback=lambda t: "5" in t["messages"][-1]["content"],
        trace_callback=lambda t: t["id"] != "skip",
    )
    rollout([convo(), convo(), convo("skip")])
    rollout([convo()])
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 3 and len(set(names)) == len(names)
    assert all(n.startswith("ok-") and n.endswith(".json") for n in names)
    data = json.loads((tmp_path / names[0]).read_text())
    assert data["stop_reason"] == "stop" and data["completion_ids"]

    rollout2, _, _ = make(
        lambda p: "hi",
        trace_dir=tmp_path / "f",
        success_callback=lambda t: False,
        trace_callback=lambda t: {"only": t["stop_reason"]},
    )
    rollout2([convo()])
    (f,) = list((tmp_path / "f").iterdir())
    assert f.name.startswith("fail-") and json.loads(f.read_text()) == {"only": "stop"}
