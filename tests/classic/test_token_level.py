"""A classic ToolEnv driven by the token engine (TokenClient): its rows carry the sampled token
ids verbatim, the tool turns bridged and masked, and make a training batch like a native one."""

from __future__ import annotations

import re

from datasets import Dataset

import verifiers_lite.classic as vf
from tests.helpers.tool_player import add
from verifiers_lite.rollout import IGNORE_INDEX, SamplingParams, TokenClient, build_training_batch
from verifiers_lite.rollout.testing import ScriptedSampler, toy_template


def respond(prompt: str) -> str:
    """Call ``add`` on the question's numbers, then box the tool's answer."""
    a, b = re.findall(r"What is (\d+) \+ (\d+)\?", prompt)[-1]
    if "<|im_start|>tool" not in prompt:
        return f'Calling. <tool_call>{{"name": "add", "arguments": {{"a": {a}, "b": {b}}}}}</tool_call>'
    return "The answer is \\boxed{" + re.findall(r"tool\n(.*?)<", prompt)[-1] + "}"


def test_classic_tool_env_rows_carry_verbatim_token_ids():
    def boxed(completion, answer) -> float:
        return float(f"\\boxed{{{answer}}}" in completion[-1].content)

    template = toy_template()
    rows = [{"question": f"What is {i} + 5?", "answer": str(i + 5)} for i in range(2)]
    env = vf.ToolEnv(
        tools=[add], dataset=Dataset.from_list(rows), rubric=vf.Rubric(funcs=[boxed]), max_turns=4
    )
    client = TokenClient(
        ScriptedSampler(template, respond), template, SamplingParams(max_tokens=400, logprobs=0)
    )
    out = env.evaluate_sync(client, "toy", rollouts_per_example=2, progress=False)
    assert [r["reward"] for r in out.rows] == [1.0] * 4
    assert all(
        r["metrics"]["add_calls"] == 1.0 and r["metrics"]["num_turns"] == 2.0 for r in out.rows
    )
    batch = build_training_batch(out.rows)
    for row, ids, labels in zip(out.rows, batch["input_ids"], batch["labels"], strict=True):
        assert ids == row["prompt_ids"] + row["completion_ids"]
        rendered = template.render([*row["prompt"], *row["completion"]], env.tool_defs)
        assert rendered.startswith(template.decode(ids))  # the ids spell the conversation
        sampled = [
            t for t, m in zip(row["completion_ids"], row["completion_mask"], strict=True) if m
        ]
        assert [lab for lab in labels if lab != IGNORE_INDEX] == sampled
        assert 0 in row["completion_mask"]  # the tool turn is bridged, not sampled
