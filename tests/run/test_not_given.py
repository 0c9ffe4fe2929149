"""Options whose None means something of its own: left out, they take the environment's or the
config's value; given as None, they mean "no bound" / "no seed"."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, get_type_hints

import verifiers_lite as vf
from verifiers_lite.core.not_given import NOT_GIVEN, NotGiven
from verifiers_lite.executors.base import Executor
from verifiers_lite.run.run_config import EvaluationOptions, RunOptions

N = 6


class InFlight:
    """Answers each request once ``hold`` requests are in flight together (or at once when
    ``hold`` is 0), counting the most it saw at one time."""

    def __init__(self, hold: int = 0) -> None:
        self.hold, self.now, self.most = hold, 0, 0
        self.full = asyncio.Event()

    async def __call__(self, messages: list[Any]) -> str:
        self.now += 1
        self.most = max(self.most, self.now)
        if self.now >= self.hold:
            self.full.set()
        try:
            if self.hold:
                await asyncio.wait_for(self.full.wait(), timeout=60)
            else:
                await asyncio.sleep(0)
            return "ok"
        finally:
            self.now -= 1


def _env(limit: int | None) -> vf.SingleTurnEnv:
    rows = [{"question": f"q{i}"} for i in range(N)]
    return vf.SingleTurnEnv(dataset=rows, max_concurrent=limit, env_id="bounded")


def test_left_out_max_concurrent_is_the_environments():
    script = InFlight()
    out = _env(2).evaluate_sync(vf.ScriptedClient(script), "m", progress=False)
    assert out.metadata["max_concurrent"] == 2 and 1 <= script.most <= 2


def test_none_asks_for_no_bound_where_the_environment_has_one():
    script = InFlight(hold=N)  # answers only once every rollout's request is in flight
    out = _env(2).evaluate_sync(vf.ScriptedClient(script), "m", progress=False, max_concurrent=None)
    assert out.metadata["max_concurrent"] is None and script.most == N
    assert vf.RunConfig().max_concurrent is NOT_GIVEN
    assert vf.RunConfig(max_concurrent=None).max_concurrent is None


def test_an_environment_group_with_an_unbounded_member_is_unbounded():
    group = vf.EnvGroup([_env(None), _env(4)], names=["a", "b"])
    assert group.max_concurrent is None


def test_evaluate_takes_the_configs_seed_and_rollouts_unless_given():
    env, client = _env(None), vf.ScriptedClient(lambda messages: "ok")
    cfg = vf.RunConfig(seed=7, rollouts_per_example=2, progress=False)
    out = env.evaluate_sync(client, "m", num_examples=2, config=cfg)
    assert out.metadata["seed"] == 7 and len(out.rows) == 4
    assert {r["seed"] for r in out.rows} and all(r["rollout_index"] < 2 for r in out.rows)
    given = env.evaluate_sync(client, "m", num_examples=2, seed=None, config=cfg)
    assert given.metadata["seed"] is None and all("seed" not in r for r in given.rows)
    plain = env.evaluate_sync(client, "m", num_examples=2, progress=False)
    assert plain.metadata["seed"] == 0 and len(plain.rows) == 2


def test_keyword_options_have_the_config_fields_types():
    """The typed keywords of generate/evaluate agree with RunConfig field by field (a keyword
    left out is "not given", so a TypedDict never spells NotGiven)."""
    names = {"Executor": Executor, "NotGiven": NotGiven}
    config = get_type_hints(vf.RunConfig, localns=names)
    keywords = get_type_hints(RunOptions, localns=names)
    evaluation = get_type_hints(EvaluationOptions, localns=names)
    for f in dataclasses.fields(vf.RunConfig):
        wanted = config[f.name]
        if f.default is NOT_GIVEN:
            wanted = wanted.__args__  # the union without NotGiven
            wanted = [a for a in wanted if a is not NotGiven]
            assert list(keywords[f.name].__args__) == wanted, f.name
        else:
            assert keywords[f.name] == wanted, f.name
        if f.name in evaluation:
            assert evaluation[f.name] == keywords[f.name], f.name
