"""Nothing assumed: a reward function taking a field no row has (``answer``, ``info``) is refused
before any request, naming the function, the parameter and the columns found; a default in its
signature opts out. A dataset with neither ``prompt`` nor ``question`` is refused when the
environment is built, listing its columns; asking for more examples than there are says so."""

from __future__ import annotations

import datasets
import pytest

import verifiers_lite as vf

NO_ANSWER = [{"question": f"Say hi to {name}", "level": i} for i, name in enumerate("abc")]


def contains(completion, answer):
    return float(answer in (completion[-1]["content"] or ""))


def by_level(completion, info):
    return float(info.get("level", 0))


def test_a_reward_taking_answer_without_an_answer_column_is_refused_before_any_request(
    fake_server,
):
    env = vf.SingleTurnEnv(dataset=NO_ANSWER, rubric=vf.Rubric([contains]))
    with pytest.raises(ValueError) as caught:
        env.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-echo", progress=False)
    message = str(caught.value)
    assert "reward function 'contains' takes 'answer'" in message
    assert "columns found: example_id, info, info.level, prompt, task" in message
    assert fake_server.stats()["requests"] == 0


def test_info_is_supplied_by_an_extra_column_and_a_default_opts_out(fake_server):
    def contains_or_none(completion, answer=None):
        return float(answer is None)

    rubric = vf.Rubric([by_level, contains_or_none])
    out = vf.SingleTurnEnv(dataset=NO_ANSWER, rubric=rubric).evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-echo", progress=False
    )
    # answer came as "" (the rollout's default), which the function was free to take
    assert [r["metrics"]["by_level"] for r in out.rows] == [0.0, 1.0, 2.0]
    plain = [{"question": "Say hi"}]
    with pytest.raises(ValueError, match="'by_level' takes 'info'.*columns found: example_id"):
        vf.SingleTurnEnv(dataset=plain, rubric=vf.Rubric([by_level])).evaluate_sync(
            vf.ChatClient(fake_server.base_url), "fake-echo", progress=False
        )
    # inputs given straight to generate are checked the same way
    env = vf.SingleTurnEnv(dataset=plain, rubric=vf.Rubric([contains]))
    with pytest.raises(ValueError, match="'contains' takes 'answer'"):
        env.generate_sync(plain, vf.ChatClient(fake_server.base_url), "fake-echo", progress=False)
    assert fake_server.stats()["requests"] == 3


def test_a_dataset_without_prompt_or_question_is_refused_when_built():
    with pytest.raises(ValueError, match=r"dataset has no 'prompt'.*its columns: text, answer"):
        vf.SingleTurnEnv(dataset=[{"text": "hi", "answer": "x"}, {"text": "yo"}])
    table = datasets.Dataset.from_list([{"input": "hi", "target": "x"}])
    with pytest.raises(
        ValueError, match=r"eval_dataset has no 'prompt'.*its columns: input, target"
    ):
        vf.SingleTurnEnv(eval_dataset=table)


def test_more_examples_than_the_dataset_has_is_said():
    env = vf.SingleTurnEnv(dataset=[{"question": f"q{i}", "answer": "a"} for i in range(4)])
    with pytest.warns(
        UserWarning, match=r"num_examples=10, but SingleTurnEnv's eval dataset has 4 rows"
    ):
        out = env.evaluate_sync(vf.ScriptedClient("a"), "scripted", num_examples=10, progress=False)
    assert len(out.rows) == 4
