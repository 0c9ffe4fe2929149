"""A rollout's own time (``timing.rollout_ms``) against its group's (``total_ms``): one slow
rollout per group, made slow by a scripted delay, so the truth is known without the library."""

from __future__ import annotations

import asyncio
from collections import defaultdict

import verifiers_lite as vf

SLOW_S = 0.8


def test_each_rollout_records_its_own_time_not_its_groups():
    calls: dict[str, int] = defaultdict(int)

    async def first_call_per_prompt_is_slow(messages):
        question = messages[-1]["content"]
        calls[question] += 1
        if calls[question] == 1:
            await asyncio.sleep(SLOW_S)
        return "\\boxed{1}"

    env = vf.SingleTurnEnv(
        dataset=[{"question": f"q{i}", "answer": "1"} for i in range(3)],
        rubric=vf.Rubric([lambda completion: 1.0]),
    )
    out = env.evaluate_sync(
        vf.ScriptedClient(first_call_per_prompt_is_slow),
        "m",
        rollouts_per_example=3,
        progress=False,
    )
    by_example = defaultdict(list)
    for row in out.rows:
        by_example[row["example_id"]].append(row["timing"])
    for timings in by_example.values():
        slow = [t for t in timings if t["rollout_ms"] >= SLOW_S * 1000]
        assert len(slow) == 1, timings  # only the rollout that waited took that long...
        assert all(
            t["total_ms"] >= SLOW_S * 1000 for t in timings
        )  # ...though its whole group waited
        assert all(t["rollout_ms"] <= t["total_ms"] for t in timings)
    df = out.to_pandas()
    assert (df["rollout_ms"] <= df["total_ms"]).all()
