"""Classic Rubric semantics, checked against values computed by hand: arguments by name (input
columns and class objects included), group functions by plural parameters, failures scoring 0.0,
metrics keyed by name, RubricGroup sums, advantages."""

from __future__ import annotations

from datasets import Dataset

import verifiers_lite.classic as vf
from tests.classic.recording import RecordingClient

ROWS = [
    {"question": "2+2", "answer": "4", "level": 1, "info": {"k": "x"}},
    {"question": "3+3", "answer": "6", "level": 2, "info": {"k": "y"}},
]


def _answer_four(messages, tools):
    return "4"  # right for the first row only


def _run(env, rollouts=1):
    out = env.evaluate_sync(
        RecordingClient(_answer_four), "m", rollouts_per_example=rollouts, progress=False
    )
    return sorted(out.rows, key=lambda r: (r["example_id"], r["rollout_index"]))


def test_reward_functions_take_rollout_fields_input_columns_and_class_objects_by_name():
    seen = []

    def look(prompt, completion, answer, state, info, task, level, parser, secret) -> float:
        seen.append(
            (
                prompt[-1].content,
                completion[-1].role,
                answer,
                info["k"],
                task["question"],
                level,
                type(parser).__name__,
                secret,
                state["answer"],
            )
        )
        return float(level)

    rubric = vf.Rubric(funcs=[look])
    rubric.add_class_object("secret", 42)
    rows = _run(vf.SingleTurnEnv(dataset=Dataset.from_list(ROWS), rubric=rubric))
    assert sorted(seen) == [
        ("2+2", "assistant", "4", "x", "2+2", 1, "Parser", 42, "4"),
        ("3+3", "assistant", "6", "y", "3+3", 2, "Parser", 42, "6"),
    ]
    assert [r["reward"] for r in rows] == [1.0, 2.0]
    assert rows[0]["metrics"] == {"look": 1.0, "num_turns": 1.0}


def test_a_failing_or_unanswerable_function_scores_zero_without_marking_the_rollout():
    def boom(completion) -> float:
        raise RuntimeError("no")

    def wants_missing(nonexistent) -> float:
        return 5.0

    def one(completion) -> float:
        return 1.0

    rows = _run(
        vf.SingleTurnEnv(
            dataset=Dataset.from_list(ROWS),
            rubric=vf.Rubric(funcs=[boom, wants_missing, one], weights=[1, 1, 0.5]),
        )
    )
    assert [r["reward"] for r in rows] == [0.5, 0.5]
    assert [r["error"] for r in rows] == [None, None]
    assert rows[0]["metrics"] == {"boom": 0.0, "wants_missing": 0.0, "one": 1.0, "num_turns": 1.0}


def test_group_functions_are_found_by_plural_parameters_or_a_list_annotation():
    def by_completions(completions, answers) -> float:  # plural parameters: a group function
        return [float(c[-1].content == a) for c, a in zip(completions, answers, strict=True)]

    def by_annotation(states) -> list[float]:
        return [10.0 * (i + 1) for i, _ in enumerate(states)]

    rubric = vf.Rubric(funcs=[by_completions, by_annotation], weights=[1.0, 0.1])
    assert rubric.requires_group_rollouts
    rows = _run(vf.SingleTurnEnv(dataset=Dataset.from_list(ROWS), rubric=rubric), rollouts=2)
    # example 0 answered right (1.0) + 0.1 x (10, 20); example 1 wrong (0.0) + the same
    assert [r["reward"] for r in rows] == [2.0, 3.0, 1.0, 2.0]
    assert [r["advantage"] for r in rows] == [-0.5, 0.5, -0.5, 0.5]


def test_a_repeated_name_keeps_the_last_value_and_both_weights_count():
    def make(value):
        def score(completion) -> float:
            return value

        return score

    rows = _run(
        vf.SingleTurnEnv(
            dataset=Dataset.from_list(ROWS[:1]),
            rubric=vf.Rubric(funcs=[make(1.0), make(3.0)], weights=[1.0, 2.0]),
        )
    )
    assert rows[0]["reward"] == 7.0
    assert rows[0]["metrics"]["score"] == 3.0


def test_rubric_group_adds_rewards_and_each_metric_over_its_rubrics():
    def right(completion, answer) -> float:
        return float(completion[-1].content == answer)

    def half(completion) -> float:
        return 0.5

    group = vf.RubricGroup([vf.Rubric(funcs=[right, half]), vf.Rubric(funcs=[half], weights=[2.0])])
    rows = _run(vf.SingleTurnEnv(dataset=Dataset.from_list(ROWS), rubric=group))
    # example 0: 1 + 0.5 + 2 x 0.5 = 2.5; example 1: 0 + 0.5 + 1 = 1.5; "half" summed over both: 1.0
    assert [r["reward"] for r in rows] == [2.5, 1.5]
    assert rows[0]["metrics"] == {"right": 1.0, "half": 1.0, "num_turns": 1.0}
    group.add_reward_func(half, 1.0)  # classic: to the group's first rubric
    # right, half, half, the environment's num_turns (appended to this very group), and the new half
    assert group.rubrics[0].funcs[-1] is half and len(group.funcs) == 5


def test_add_metric_has_weight_zero_and_pass_threshold_decides_pass():
    def right(completion, answer) -> float:
        return float(completion[-1].content == answer)

    rubric = vf.Rubric(funcs=[])
    rubric.add_reward_func(right, 0.6)
    rubric.add_metric(right)
    env = vf.SingleTurnEnv(dataset=Dataset.from_list(ROWS), rubric=rubric)
    rows = _run(env)
    assert [r["reward"] for r in rows] == [0.6, 0.0]
    assert env.pass_criterion.passes(rows[0]) and not env.pass_criterion.passes(
        rows[1]
    )  # threshold 0.5
