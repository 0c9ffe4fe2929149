"""A run reads its dataset as groups are scheduled: a list stays the caller's, a
``datasets.Dataset`` or a ``pyarrow.Table`` is read in windows, and the formatted inputs alive
at any time are bounded by the groups in flight, not by the dataset. The inputs are the ones
the materialised dataset gives, in the same (shuffled) order."""

from __future__ import annotations

import gc
import random

import datasets
import pyarrow as pa
import pytest

import verifiers_lite as vf
from verifiers_lite.run.input_plan import InputPlan

N = 300
INPUT_KEYS = {"prompt", "answer", "info", "task", "example_id"}


def rows(n: int = N) -> list[dict]:
    return [
        {"question": f"What is {i} + 1?", "answer": str(i + 1), "level": i % 3} for i in range(n)
    ]


def sources() -> dict[str, object]:
    return {
        "list": rows(),
        "dataset": datasets.Dataset.from_list(rows()),
        "table": pa.Table.from_pylist(rows()),
        "builder": rows,
        "generator": (r for r in rows()),
    }


def answer(messages: list[dict]) -> str:
    return messages[-1]["content"].split()[
        2
    ]  # "What is 7 + 1?" -> "7", which the rubric counts right


def env_of(source: object) -> vf.SingleTurnEnv:
    def correct(completion, answer) -> float:
        return float((completion[-1]["content"] or "") == str(int(answer) - 1))

    return vf.SingleTurnEnv(dataset=source, rubric=vf.Rubric([correct]), system_prompt="Be brief.")


@pytest.mark.parametrize("kind", ["list", "dataset", "table", "builder", "generator"])
@pytest.mark.parametrize("shuffle", [False, True])
def test_eval_inputs_are_the_materialised_datasets_in_the_same_order(
    kind: str, shuffle: bool
) -> None:
    expected = list(env_of(rows()).get_eval_dataset())  # every row formatted at once, as a list
    if shuffle:
        random.Random(5).shuffle(expected)
    expected = [ex for ex in expected[:120] for _ in range(3)]
    got = env_of(sources()[kind]).get_eval_inputs(
        num_examples=120, rollouts_per_example=3, shuffle=shuffle, seed=5
    )
    assert len(got) == 360 and list(got) == expected
    assert got[-1] == expected[-1] and got[10:13] == expected[10:13]
    assert all(inp["info"] == {"level": (int(inp["answer"]) - 1) % 3} for inp in got[:30])


def _live_inputs() -> int:
    """Formatted rollout inputs alive now (not states or rows, which carry more keys)."""
    gc.collect()
    return sum(
        1
        for o in gc.get_objects()
        if type(o) is dict
        and o.keys() >= INPUT_KEYS
        and "trajectory_id" not in o
        and "completion" not in o
    )


@pytest.mark.parametrize("kind", ["dataset", "list"])
def test_a_run_holds_the_inputs_of_the_groups_in_flight_only(tmp_path, kind: str) -> None:
    env = env_of(sources()[kind])
    seen: list[int] = []
    calls = 0

    def on_progress(stats, out) -> None:
        nonlocal calls
        calls += 1
        if calls % 25 == 0:
            seen.append(_live_inputs())

    before = _live_inputs()
    out = env.evaluate_sync(
        vf.ScriptedClient(answer),
        "scripted",
        rollouts_per_example=2,
        max_concurrent=4,
        results_path=str(tmp_path / "run"),
        progress=False,
        on_progress=on_progress,
    )
    assert (
        len(out) == 2 * N
        and out.summary["num_scored"] == 2 * N
        and out.summary["reward_mean"] == 1.0
    )
    assert len(seen) == N // 25
    # 4 requests in flight: two groups of two, each input and its seeded copy, plus the group a
    # worker is starting; the whole dataset would be 300.
    assert max(seen) - before <= 16, seen


def test_a_resumed_run_with_a_dataset_reads_only_the_missing_groups(tmp_path) -> None:
    first = env_of(datasets.Dataset.from_list(rows(100))).evaluate_sync(
        vf.ScriptedClient(answer),
        "scripted",
        rollouts_per_example=2,
        results_path=str(tmp_path),
        progress=False,
    )
    asked: list[str] = []

    def counting(messages: list[dict]) -> str:
        asked.append(messages[-1]["content"])
        return answer(messages)

    again = env_of(datasets.Dataset.from_list(rows(150))).evaluate_sync(
        vf.ScriptedClient(counting),
        "scripted",
        rollouts_per_example=2,
        results_path=str(tmp_path),
        progress=False,
    )
    assert sorted(asked) == sorted(f"What is {i} + 1?" for i in range(100, 150) for _ in range(2))
    assert len(again) == 300 and list(again)[:200] == list(first)


def _refused_before_any_request(source: object, match: str) -> None:
    asked: list[object] = []
    env = env_of(source)
    with pytest.raises(ValueError, match=match):
        env.evaluate_sync(
            vf.ScriptedClient(lambda m: asked.append(m) or "x"), "scripted", progress=False
        )
    assert asked == []


@pytest.mark.parametrize("kind", ["dataset", "table", "list"])
def test_a_repeated_example_id_deep_in_a_streamed_dataset_fails_before_any_request(
    kind: str,
) -> None:
    data = [{"question": f"q{i}", "answer": "a", "example_id": i} for i in range(N)]
    data[200]["example_id"] = 3
    source = {"dataset": datasets.Dataset.from_list, "table": pa.Table.from_pylist, "list": list}[
        kind
    ](data)
    _refused_before_any_request(source, r"dataset: example_id 3 appears more than once")


def test_a_bad_row_deep_in_a_dataset_fails_before_any_request() -> None:
    data = [{"question": f"q{i}", "answer": "a"} for i in range(N)]
    data[200] = {"question": 7, "answer": "a"}
    _refused_before_any_request(data, r"dataset row 200: field 'question' must be a string")


@pytest.mark.parametrize("eids", [[0, 0, 1, 1, 2, 2], [5, 3, 5, 9, 3, 5, -2], [7], []])
def test_the_plan_groups_inputs_by_example_in_first_seen_order(eids: list[int]) -> None:
    inputs = [
        {"question": f"q{eid}", "answer": str(i), "example_id": eid} for i, eid in enumerate(eids)
    ]
    expected: dict[int, list[str]] = {}
    for inp in inputs:  # by hand: first-seen order, each group's inputs in the caller's order
        expected.setdefault(inp["example_id"], []).append(inp["answer"])
    plan = InputPlan(env_of(rows(1)), inputs)
    assert (
        list(plan) == list(expected)
        and len(plan) == len(expected)
        and plan.num_rollouts == len(eids)
    )
    assert {eid: [inp["answer"] for inp in plan.group(eid)] for eid in plan} == expected
    assert {eid: plan[eid] for eid in plan} == {eid: len(v) for eid, v in expected.items()}
    assert all(plan.first_input(eid)["answer"] == v[0] for eid, v in expected.items())
    assert 4 not in plan and "5" not in plan and True not in plan
    with pytest.raises(KeyError):
        plan[4]
    assert all(
        set(inp) == {"question", "answer", "example_id"} for inp in inputs
    )  # the caller's rows untouched
