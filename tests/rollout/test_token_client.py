"""TokenClient (Environment link) and training batches, on the scripted sampler."""

from __future__ import annotations

import asyncio
import json

import hypothesis
import pytest
from hypothesis import strategies as st

from verifiers_lite.core.model_client import ChatResponse, ModelClient
from verifiers_lite.rollout import (
    IGNORE_INDEX,
    SamplingParams,
    TokenClient,
    ToolManager,
    build_training_batch,
)
from verifiers_lite.rollout.testing import ScriptedSampler, toy_template
from verifiers_lite.rollout.training import merge_turns


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def respond(prompt: str) -> str:
    if prompt.count("<|im_start|>tool") == 0:
        return 'ok <tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'
    return "It is 5."


async def run_conversation(
    client: TokenClient, tm: ToolManager, q: str
) -> tuple[list[dict], list[ChatResponse]]:
    """What a ToolEnv does: chat, run tools, chat again."""
    messages = [{"role": "user", "content": q}]
    responses = []
    for _ in range(3):
        r = await client.chat(
            "m", messages, {"temperature": 0.5, "max_tokens": 200}, tools=tm.schemas
        )
        responses.append(r)
        messages.append(r.message)
        if not r.tool_calls:
            break
        calls = tm.parse(r.content).calls
        assert [c["id"] for c in r.tool_calls] != []
        for call, oc in zip(calls, r.tool_calls, strict=True):
            call.id = oc["id"]
            msg = await tm.call_async(call)
            messages.append({**msg, "env_bookkeeping": 1})  # envs may add keys: still matched
    return messages, responses


async def test_token_client_keeps_ids_verbatim_across_turns() -> None:
    template = toy_template()
    sampler = ScriptedSampler(template, respond)
    client = TokenClient(sampler, template)
    assert isinstance(client, ModelClient)
    tm = ToolManager([add])
    messages, rs = await run_conversation(client, tm, "2+3?")
    assert [r.finish_reason for r in rs] == ["tool_calls", "stop"]
    assert rs[0].tool_calls[0]["function"] == {
        "name": "add",
        "arguments": json.dumps({"a": 2, "b": 3}),
    }
    assert rs[0].tool_calls[0]["id"].startswith("call_")
    # Turn 2's prompt extends turn 1's prompt + sampled ids; the bridge holds the separator.
    first = rs[0].prompt_ids + rs[0].completion_ids
    assert rs[1].prompt_ids[: len(first)] == first
    assert template.decode(rs[1].prompt_ids) == template.render(
        messages[:-1], tm.schemas, add_generation_prompt=True
    )
    assert rs[0].completion_logprobs is not None and len(rs[0].completion_logprobs) == len(
        rs[0].completion_ids
    )
    assert rs[1].usage.prompt_tokens == len(rs[1].prompt_ids)

    merged = merge_turns([(r.prompt_ids, r.completion_ids, r.completion_logprobs) for r in rs])
    row = {**merged, "advantage": 0.5}
    batch = build_training_batch([row])
    ids, labels, lps = batch["input_ids"][0], batch["labels"][0], batch["logprobs"][0]
    assert ids == rs[1].prompt_ids + rs[1].completion_ids
    trainable = [i for i, lab in zip(ids, labels, strict=True) if lab != IGNORE_INDEX]
    assert trainable == rs[0].completion_ids + rs[1].completion_ids
    assert [lp for lp, lab in zip(lps, labels, strict=True) if lab != IGNORE_INDEX] == rs[
        0
    ].completion_logprobs + rs[1].completion_logprobs
    assert batch["advantages"] == [0.5]


async def test_concurrent_chats_share_one_sample_call_per_turn() -> None:
    template = toy_template()
    sampler = ScriptedSampler(template, respond)
    client = TokenClient(sampler, template, batch_window_s=0.01)
    tm = ToolManager([add])
    results = await asyncio.gather(*(run_conversation(client, tm, f"q{i}") for i in range(6)))
    assert len(sampler.calls) == 2 and [len(c) for c in sampler.calls] == [6, 6]
    assert all(len(rs) == 2 for _, rs in results)


async def test_unknown_conversation_is_rendered_fresh_and_errors_propagate() -> None:
    template = toy_template()

    class Broken:
        def sample(self, prompts, params):
            raise RuntimeError("backend down")

    client = TokenClient(Broken(), template)
    with pytest.raises(RuntimeError, match="backend down"):
        await client.chat("m", [{"role": "user", "content": "x"}])
    ok = TokenClient(ScriptedSampler(template, lambda p: "hi"), template)
    r = await ok.chat("m", [{"role": "user", "content": "x"}])
    assert r.prompt_ids == template.encode_messages([{"role": "user", "content": "x"}])
    assert r.content == "hi" and r.finish_reason == "stop" and r.tool_calls == []


def test_sampling_params_from_openai_args() -> None:
    base = SamplingParams(logprobs=0)
    p = base.with_sampling_args(
        {
            "max_completion_tokens": 9,
            "stop": "\n",
            "logprobs": True,
            "top_logprobs": 3,
            "seed": 1,
            "n": 4,
        },
    )
    assert (p.max_tokens, p.stop, p.logprobs, p.seed) == (9, ("\n",), 3, 1)
    assert p.temperature == base.temperature and p.extra == {}  # untouched; "n" has no field
    assert base.with_sampling_args({"logprobs": False}).logprobs is None
    assert base.with_sampling_args(None) is base


_PARAMS = st.builds(
    SamplingParams,
    temperature=st.floats(0, 2),
    top_p=st.floats(0.01, 1),
    top_k=st.one_of(st.just(-1), st.integers(1, 100)),
    max_tokens=st.integers(1, 4096),
    stop=st.lists(st.text(min_size=1, max_size=3), max_size=2).map(tuple),
    stop_token_ids=st.lists(st.integers(0, 50000), max_size=2).map(tuple),
    logprobs=st.one_of(st.none(), st.integers(0, 20)),
    seed=st.one_of(st.none(), st.integers(0, 2**31)),
    repetition_penalty=st.floats(0.5, 2),
)


@hypothesis.given(_PARAMS)
def test_sampling_args_and_sampling_params_convert_both_ways(p: SamplingParams) -> None:
    args = p.to_sampling_args()
    assert SamplingParams().with_sampling_args(args) == p
    # what a chat-completions request reads
    assert (args["temperature"], args["top_p"], args["max_tokens"]) == (
        p.temperature,
        p.top_p,
        p.max_tokens,
    )
    assert args.get("logprobs", False) is (p.logprobs is not None)
    assert args.get("top_logprobs") == (p.logprobs or None)
    assert args.get("top_k") == (p.top_k if p.top_k > 0 else None)


def test_build_training_batch_reads_one_token_layout() -> None:
    rows = [
        {
            "prompt_ids": [1, 2],
            "completion_ids": [3, 4, 5],
            "completion_mask": [1, 0, 1],
            "completion_logprobs": [-0.1, 0.0, -0.3],
            "advantage": -1.0,
        },
        {
            "prompt_ids": [7],
            "completion_ids": [8, 9, 10],
            "completion_mask": [1, 0, 1],
            "completion_logprobs": [-0.2, 0.0, -0.4],
        },
    ]
    b = build_training_batch(rows)
    assert b["input_ids"] == [[1, 2, 3, 4, 5], [7, 8, 9, 10]]
    assert b["labels"] == [[-100, -100, 3, -100, 5], [-100, 8, -100, 10]]
    assert b["logprobs"] == [[0.0, 0.0, -0.1, 0.0, -0.3], [0.0, -0.2, 0.0, -0.4]]
    assert b["advantages"] == [-1.0, 0.0]
    p = build_training_batch(rows, pad_to_longest=True, pad_token_id=0)
    assert (
        p["input_ids"][1] == [7, 8, 9, 10, 0]
        and p["labels"][1][-1] == -100
        and p["attention_mask"][1] == [1, 1, 1, 1, 0]
    )
    with pytest.raises(ValueError):
        merge_turns([([1], [2], None), ([9, 9], [3], None)])
    # The token engine's own layout alone is refused, naming what is missing and what it has.
    with pytest.raises(
        KeyError,
        match="row 1: a training row needs prompt_ids/completion_ids/completion_mask/"
        "completion_logprobs; this one has input_ids/labels",
    ):
        build_training_batch(
            [rows[0], {"input_ids": [7, 8], "labels": [-100, 8], "logprobs": [-0.2]}]
        )
    with pytest.raises(KeyError, match="no token fields"):
        build_training_batch([{"reward": 1.0}])
