"""Bad input gets a ValueError naming the row index and the field."""

from __future__ import annotations

import pytest

import verifiers_lite as vf


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        (
            [{"question": "ok"}, {"prompt": [{"content": "no role"}]}],
            r"dataset row 1, field 'prompt': message 0 is missing 'role'",
        ),
        (
            [{"prompt": [{"role": "user", "content": 42}]}],
            r"row 0, field 'prompt': message 0 has content of type int",
        ),
        ([{"prompt": [{"role": "wizard", "content": "x"}]}], r"row 0.*unknown role 'wizard'"),
        (
            [{"question": "q", "info": "{not json"}],
            r"dataset row 0: field 'info' is not valid JSON",
        ),
        ([{"question": "q", "info": "[1, 2]"}], r"row 0: field 'info' must be a dict"),
        ([{"answer": "only"}], r"dataset has no 'prompt' .*; its columns: answer"),
        ([{"question": 7}], r"row 0: field 'question' must be a string"),
        ([{"question": "a", "example_id": "x"}], r"row 0: field 'example_id' must be an integer"),
        (
            [{"question": "a", "example_id": 1}, {"question": "b", "example_id": 1}],
            r"example_id 1 appears more than once",
        ),
        (["not a dict"], r"dataset: row 0 must be a dict"),
    ],
)
def test_malformed_rows_are_refused_clearly(rows, match):
    with pytest.raises(ValueError, match=match):
        vf.SingleTurnEnv(dataset=rows).get_dataset()


def test_dataset_builders_are_called_lazily_and_once():
    calls = []

    def build():
        calls.append(1)
        return [{"question": "What is 1 + 1?", "answer": "2", "task": "add"}]

    env = vf.SingleTurnEnv(
        dataset=build,
        system_prompt="Be brief.",
        few_shot=[{"role": "user", "content": "2 + 2?"}, {"role": "assistant", "content": "4"}],
    )
    assert calls == []
    ds = env.get_dataset()
    env.get_eval_dataset()
    assert calls == [1]
    assert [m["role"] for m in ds[0]["prompt"]] == ["system", "user", "assistant", "user"]
    assert ds[0]["example_id"] == 0 and ds[0]["task"] == "add" and ds[0]["info"] == {}


def test_hf_dataset_is_accepted_without_progress_noise(capfd):
    datasets = pytest.importorskip("datasets")
    ds = datasets.Dataset.from_list([{"question": f"q{i}", "answer": str(i)} for i in range(5)])
    env = vf.SingleTurnEnv(eval_dataset=ds)
    assert [r["example_id"] for r in env.get_eval_dataset()] == [0, 1, 2, 3, 4]
    captured = capfd.readouterr()
    assert "Map" not in captured.err and "%" not in captured.err


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="max_concurrent must be >= 1"):
        vf.SingleTurnEnv(dataset=[{"question": "q"}], max_concurrent=0)
    with pytest.raises(ValueError, match="rollouts_per_example must be >= 1"):
        vf.SingleTurnEnv(dataset=[{"question": "q"}]).get_eval_inputs(rollouts_per_example=0)
    with pytest.raises(ValueError, match="no eval_dataset and no dataset"):
        vf.SingleTurnEnv().get_eval_dataset()
    with pytest.raises(TypeError, match="client must be"):
        vf.SingleTurnEnv(dataset=[{"question": "q"}]).evaluate_sync(object(), "m", progress=False)
    with pytest.raises(ValueError, match="Rubric got 2 reward functions but 1 weights"):
        vf.Rubric([len, len], [1.0])
    with pytest.raises(ValueError, match="base_url must be an http"):
        vf.ChatClient("localhost:8000")


def test_evaluate_picks_shuffles_and_repeats():
    env = vf.SingleTurnEnv(dataset=[{"question": str(i)} for i in range(10)])
    picked = env.get_eval_inputs(num_examples=3, rollouts_per_example=2, shuffle=True, seed=1)
    again = env.get_eval_inputs(num_examples=3, rollouts_per_example=2, shuffle=True, seed=1)
    assert [r["example_id"] for r in picked] == [r["example_id"] for r in again]
    assert len(picked) == 6 and picked[0]["example_id"] == picked[1]["example_id"]
    assert [r["example_id"] for r in picked[::2]] != [0, 1, 2]  # seed 1 shuffles
