"""Grouped scoring, advantages, and the bound on model requests in flight."""

from __future__ import annotations

import pytest

import verifiers_lite as vf
from tests.helpers.envs import arithmetic_rows, boxed_correct, make_env


def test_grouped_mode_scores_each_example_together(fake_server):
    seen_groups: list[list[int]] = []

    @vf.group_reward
    def relative_length(completion, example_id):
        seen_groups.append(list(example_id))
        lengths = [len(c[-1]["content"]) for c in completion]
        return [ln / max(lengths) for ln in lengths]

    env = vf.SingleTurnEnv(
        dataset=arithmetic_rows(6), rubric=vf.Rubric([boxed_correct, relative_length], [1.0, 0.5])
    )
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-arith", rollouts_per_example=4, progress=False
    )
    assert len(out) == 24
    assert sorted(map(tuple, seen_groups)) == [
        (i,) * 4 for i in range(6)
    ]  # one call per whole group
    df = out.to_pandas()
    for _, group in df.groupby("example_id"):
        assert sorted(group["rollout_index"]) == [0, 1, 2, 3]
        assert abs(group["advantage"].sum()) < 1e-9
        assert group["advantage"].tolist() == pytest.approx(
            (group["reward"] - group["reward"].mean()).tolist()
        )
    assert (df["reward"] == df["boxed_correct"] + 0.5 * df["relative_length"]).all()


def test_independent_scoring_scores_rollouts_alone(fake_server):
    out = make_env(5).evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=3,
        independent_scoring=True,
        progress=False,
    )
    assert len(out) == 15
    assert all(r["advantage"] == 0.0 for r in out.rows)  # a group of one has no advantage
    assert sorted((r["example_id"], r["rollout_index"]) for r in out.rows) == [
        (e, i) for e in range(5) for i in range(3)
    ]


@pytest.mark.parametrize("independent", [False, True])
@pytest.mark.parametrize("limit", [1, 5])
def test_server_never_sees_more_than_max_concurrent_requests(fake_server, independent, limit):
    fake_server.configure(latency_ms=15)
    env = make_env(12)
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=4,
        max_concurrent=limit,
        independent_scoring=independent,
        progress=False,
    )
    stats = fake_server.stats()
    assert len(out) == 48 and stats["requests"] == 48
    assert stats["max_in_flight"] <= limit
    assert stats["max_in_flight"] == limit  # and the bound is actually used, not undershot


class ThreeTurnEnv(vf.MultiTurnEnv):
    async def env_response(self, messages, state):
        return [{"role": "user", "content": f"Again: {state['prompt'][-1]['content']}"}]


def test_multi_turn_requests_in_flight_are_bounded_too(fake_server):
    fake_server.configure(latency_ms=10)
    env = ThreeTurnEnv(dataset=arithmetic_rows(10), rubric=vf.Rubric([boxed_correct]), max_turns=3)
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=3,
        max_concurrent=4,
        progress=False,
    )
    assert {r["turns"] for r in out.rows} == {3}
    assert {r["stop_reason"] for r in out.rows} == {"max_turns"}
    assert fake_server.stats()["max_in_flight"] <= 4
    assert fake_server.stats()["requests"] == 90
