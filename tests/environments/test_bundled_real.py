"""Every bundled environment end to end against the real embedded model (SmolLM2-135M on
llama.cpp). Kept small: a few examples, short completions (2 shared cores)."""

from __future__ import annotations

import math

import pytest

import verifiers_lite as vf

pytestmark = [pytest.mark.local_model, pytest.mark.slow]

CASES = {
    "arithmetic": ({"num_examples": 4}, 2),
    "guess_number": ({"num_examples": 2, "high": 10, "max_turns": 3}, 1),
    "calculator": ({"num_examples": 2, "max_turns": 2, "max_tokens": 48}, 1),
    "reasoning_gym": (
        {
            "task": "chain_sum",
            "num_examples": 2,
            "min_terms": 2,
            "max_terms": 2,
            "max_digits": 1,
            "max_tokens": 48,
        },
        2,
    ),
}


@pytest.mark.parametrize("env_id", sorted(CASES))
def test_bundled_environment_runs_against_the_embedded_model(local_llm, env_id):
    env_args, rollouts = CASES[env_id]
    env = vf.load_environment(env_id, **env_args)
    out = env.evaluate_sync(
        local_llm.client(), local_llm.model_name, rollouts_per_example=rollouts, progress=False
    )
    n = env_args["num_examples"] * rollouts
    df = out.to_pandas()
    assert len(df) == n
    assert df["error"].isna().all(), df["error"].tolist()
    assert df["reward"].between(0.0, 1.0).all()
    assert not df["reward"].isna().any()
    for row in out.rows:
        texts = [m.get("content") or "" for m in row["completion"] if m["role"] == "assistant"]
        assert (
            texts
            and any(t.strip() for t in texts)
            or any(m.get("tool_calls") for m in row["completion"])
        ), row["completion"]
    assert (df["completion_tokens"] > 0).all()
    assert list(df["example_id"]) == sorted(df["example_id"])
    assert set(df["stop_reason"]) <= {"stop", "length", "max_turns", "env_done"}
    assert math.isfinite(out.summary["reward_mean"])


def test_arithmetic_rewards_are_real_and_varied(local_llm):
    """The default task is sized for this model: neither always right nor always wrong."""
    env = vf.load_environment("arithmetic", num_examples=12, seed=0)
    out = env.evaluate_sync(local_llm.client(), local_llm.model_name, progress=False)
    rewards = out.rewards
    assert 0.0 < sum(rewards) / len(rewards) < 1.0, rewards
    assert out.to_pandas()["answered"].mean() > 0.8  # the parser reads its answers
