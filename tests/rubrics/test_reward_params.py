"""A reward function's parameters are checked before the first request: one the rubric cannot
supply (a misspelling) is a ValueError naming the function, the parameter and the names
available — at construction, and again when a run starts (the list may have been edited)."""

from __future__ import annotations

import pytest

import verifiers_lite as vf
from tests.helpers.envs import arithmetic_rows

AVAILABLE = "prompt, completion, answer, state, info, task, example_id, parser"


def test_a_misspelled_parameter_fails_at_construction_naming_everything():
    def bad(completoin):
        return 1.0

    with pytest.raises(ValueError) as info:
        vf.Rubric([bad])
    msg = str(info.value)
    assert "reward function 'bad'" in msg and "'completoin'" in msg and AVAILABLE in msg


def test_a_misspelled_parameter_added_later_fails_before_any_request(fake_server):
    def good(completion, answer) -> float:
        return 1.0

    def bad(completoin):
        return 1.0

    rubric = vf.Rubric([good])
    with pytest.raises(ValueError, match="'bad' has parameter 'completoin'"):
        rubric.add_reward_func(bad)
    rubric.funcs.append(bad)  # edited behind the rubric's back: caught when the run starts
    rubric.weights.append(1.0)
    env = vf.SingleTurnEnv(dataset=arithmetic_rows(3), rubric=rubric)
    with pytest.raises(ValueError, match="'bad' has parameter 'completoin'"):
        env.evaluate_sync(
            vf.ChatClient(fake_server.base_url),
            "fake-arith",
            rollouts_per_example=2,
            progress=False,
        )
    assert fake_server.stats()["requests"] == 0


def test_a_bad_group_reward_in_an_env_group_fails_before_any_request(fake_server):
    @vf.group_reward
    def rank(completions, **_):  # a group function takes `completion` (a list), not `completions`
        return [1.0] * len(completions)

    ok = vf.SingleTurnEnv(dataset=arithmetic_rows(2), rubric=vf.Rubric([lambda completion: 1.0]))
    with pytest.raises(ValueError, match="'rank' has parameter 'completions'"):
        vf.Rubric([rank])
    broken = vf.SingleTurnEnv(
        dataset=arithmetic_rows(2), rubric=vf.Rubric([lambda completion: 1.0])
    )
    broken.rubric.funcs[0] = rank
    group = vf.EnvGroup([ok, broken], names=["ok", "broken"])
    with pytest.raises(ValueError, match="'rank' has parameter 'completions'"):
        group.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-arith", progress=False)
    assert fake_server.stats()["requests"] == 0


def test_defaults_var_keywords_and_every_supplied_name_are_accepted(fake_server):
    def full(
        prompt,
        completion,
        answer,
        state,
        info,
        task,
        example_id,
        parser,
        *args,
        threshold=0.5,
        **kw,
    ):
        return 1.0 if state["example_id"] == example_id else 0.0

    rows = [{**r, "info": {"source": "hand"}} for r in arithmetic_rows(2)]  # every name has a value
    env = vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric([full, lambda **kw: 0.0]))
    out = env.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-arith", progress=False)
    assert [r["reward"] for r in out.rows] == [1.0, 1.0]


def test_unscored_runs_do_not_check_the_rubric(fake_server):
    def bad(completoin):
        return 1.0

    rubric = vf.Rubric()
    rubric.funcs.append(bad)
    rubric.weights.append(1.0)
    env = vf.SingleTurnEnv(dataset=arithmetic_rows(2), rubric=rubric)
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-arith", progress=False, score_rollouts=False
    )
    assert len(out.rows) == 2 and fake_server.stats()["requests"] == 2


class _CountedSignature:
    """A reward function that counts how often its signature is read."""

    def __init__(self, names: str) -> None:
        import inspect

        self.reads = 0
        self._sig = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names.split()]
        )
        self.seen: list[set[str]] = []
        self.__name__ = names.replace(" ", "_")

    @property
    def __signature__(self):  # read by inspect.signature
        self.reads += 1
        return self._sig

    def __call__(self, **kwargs):
        self.seen.append(set(kwargs))
        return 1.0


async def test_a_reward_functions_parameters_are_read_once_not_per_call():
    first = _CountedSignature("completion answer")
    rubric = vf.Rubric([first])
    reads_at_check = first.reads
    states = [
        {
            "prompt": [],
            "completion": [{"role": "assistant", "content": str(i)}],
            "answer": str(i),
            "info": {},
            "task": "t",
            "example_id": i,
        }
        for i in range(5)
    ]
    for s in states:
        await rubric.score_rollout(s)
    await rubric.score_group(states)
    assert first.reads == reads_at_check  # ten calls, no more reads
    assert first.seen == [{"completion", "answer"}] * 10
    # A function put in the list behind the rubric's back is read on its first call and kept.
    later = _CountedSignature("state task")
    rubric.funcs.append(later)
    rubric.weights.append(1.0)
    await rubric.score_group(states)
    await rubric.score_group(states)
    assert later.reads == 1 and later.seen == [{"state", "task"}] * 10
    assert [s["reward"] for s in states] == [2.0] * 5
