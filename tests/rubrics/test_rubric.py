"""Rubric semantics: the arguments reward functions get, group rewards, non-numeric rewards."""

from __future__ import annotations

import asyncio

import pytest

import verifiers_lite as vf


def _state(text, answer="4", **extra):
    return {
        "prompt": [{"role": "user", "content": "q"}],
        "completion": [{"role": "assistant", "content": text}],
        "answer": answer,
        "info": {},
        "task": "t",
        "example_id": 0,
        "metrics": {},
        "error": None,
        **extra,
    }


def test_reward_functions_get_only_the_arguments_they_name_and_may_be_async():
    got = {}

    def uses_answer(completion, answer):
        got["sync"] = (completion[-1]["content"], answer)
        return 1.0

    async def uses_parser(completion, parser, **kwargs):
        got["kw"] = sorted(kwargs)
        return 0.5 if parser.parse_answer(completion) == "x" else 0.0

    rubric = vf.Rubric([uses_answer, uses_parser], weights=[2.0, 1.0])
    state = _state("x")
    asyncio.run(rubric.score_rollout(state))
    assert got["sync"] == ("x", "4")
    assert got["kw"] == ["answer", "example_id", "info", "prompt", "state", "task"]
    assert state["metrics"] == {"uses_answer": 1.0, "uses_parser": 0.5}
    assert state["reward"] == 2.5 and state["advantage"] == 0.0


def test_group_rewards_are_declared_explicitly_and_see_lists():
    @vf.group_reward
    def rank(completion):
        lengths = [len(c[-1]["content"]) for c in completion]
        return [sorted(lengths).index(n) / (len(lengths) - 1) for n in lengths]

    def completions(completion):  # a per-rollout function whose parameter *looks* plural
        return 1.0

    states = [_state("a"), _state("bbb"), _state("cc")]
    asyncio.run(vf.Rubric([rank, completions]).score_group(states))
    assert [s["metrics"]["rank"] for s in states] == [0.0, 1.0, 0.5]
    assert [s["reward"] for s in states] == [1.0, 2.0, 1.5]
    assert sum(s["advantage"] for s in states) == pytest.approx(0.0)


def test_non_numeric_reward_is_a_rubric_error():
    state = _state("x")
    asyncio.run(vf.Rubric([lambda completion: "high"]).score_rollout(state))
    assert (
        state["error"]["category"] == "rubric_error" and "not a number" in state["error"]["message"]
    )
    assert state["reward"] is None  # unscored, never a silent 0
