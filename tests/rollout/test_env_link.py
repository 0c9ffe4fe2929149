"""ToolEnv driven by a TokenClient: output rows carry verbatim token data for GRPO."""

from __future__ import annotations

import pytest

import verifiers_lite as vf
from tests.helpers.tool_player import add, boxed_correct, tool_player
from verifiers_lite.rollout import IGNORE_INDEX, SamplingParams, TokenClient, build_training_batch
from verifiers_lite.rollout.testing import ScriptedSampler, toy_template

respond = tool_player()


def dataset(n: int) -> list[dict]:
    return [{"question": f"What is {i} + 5?", "answer": str(i + 5)} for i in range(n)]


def check_rows(rows: list[dict], template, tools) -> dict:
    batch = build_training_batch(rows)
    for row, ids, labels, lps in zip(
        rows, batch["input_ids"], batch["labels"], batch["logprobs"], strict=True
    ):
        assert ids == row["prompt_ids"] + row["completion_ids"]
        # The ids render the conversation exactly (up to the final end-of-turn separator).
        rendered = template.render([*row["prompt"], *row["completion"]], tools)
        assert rendered.startswith(template.decode(ids))
        missing = rendered[len(template.decode(ids)) :]
        if row["stop_reason"] == "length":  # the cut turn was never closed
            assert missing == f"{template.eos_token}\n"
        else:
            assert missing in ("", "\n")
        assert all(lab == IGNORE_INDEX for lab in labels[: len(row["prompt_ids"])])
        sampled = [
            t for t, m in zip(row["completion_ids"], row["completion_mask"], strict=True) if m
        ]
        assert [lab for lab in labels if lab != IGNORE_INDEX] == sampled
        assert len([lp for lp, lab in zip(lps, labels, strict=True) if lab != IGNORE_INDEX]) == len(
            sampled
        )
    return batch


def test_tool_env_with_token_client_scripted() -> None:
    template = toy_template()
    sampler = ScriptedSampler(template, respond)
    env = vf.ToolEnv(
        tools=[add], dataset=dataset(3), rubric=vf.Rubric([boxed_correct]), max_turns=4
    )
    client = TokenClient(sampler, template, SamplingParams(max_tokens=400, logprobs=0))
    out = env.evaluate_sync(client, "toy", rollouts_per_example=2, progress=False)
    assert [r["reward"] for r in out.rows] == [1.0] * 6
    assert all(r["turns"] == 2 for r in out.rows)
    batch = check_rows(out.rows, template, env.tool_defs)
    assert batch["advantages"] == [0.0] * 6
    # Tool turns are bridged, not sampled: every row has masked tokens between its two turns.
    assert all(0 in r["completion_mask"] for r in out.rows)
    assert out.to_training_batch()["input_ids"] == batch["input_ids"]


@pytest.mark.local_model
def test_tool_env_with_token_client_real_model(llama_sampler, llama_template) -> None:
    env = vf.ToolEnv(
        tools=[add], dataset=dataset(1), rubric=vf.Rubric([boxed_correct]), max_turns=2
    )
    client = TokenClient(
        llama_sampler,
        llama_template,
        SamplingParams(temperature=0.7, max_tokens=24, seed=5, logprobs=0),
    )
    out = env.evaluate_sync(client, "smollm2", rollouts_per_example=2, progress=False)
    assert len(out.rows) == 2
    for r in out.rows:
        assert r["completion_ids"] and len(r["completion_logprobs"]) == len(r["completion_ids"])
    check_rows(out.rows, llama_template, env.tool_defs)
