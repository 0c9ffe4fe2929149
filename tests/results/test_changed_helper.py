"""A refused resume names what changed in the reward code: a helper the reward functions call is
named as the change, with the functions that use it; a function's own change names the function."""

from __future__ import annotations

import textwrap

import verifiers_lite as vf
from verifiers_lite.results.fingerprint import fingerprint_diff, rubric_fingerprint

REWARDS = """
def solved(completion, answer):
    return float(answer_of(completion) == answer)

def efficiency(completion, answer, state):
    return 0.5 / state["turns"] if answer_of(completion) == answer else 0.0

def length(completion):
    return float(len(completion[-1]["content"]) < LIMIT)
"""
HELPER = {
    "v1": "def answer_of(completion):\n    return completion[-1]['content'].strip()\n",
    "v2": "def answer_of(completion):\n    return completion[-1]['content'].split()[-1]\n",
}


def _rubric(helper: str = "v1", limit: int = 80, solved_body: str | None = None) -> vf.Rubric:
    """The reward functions as a notebook cell defines them (``__main__``, no source file)."""
    source = (
        REWARDS
        if solved_body is None
        else REWARDS.replace("return float(answer_of(completion) == answer)", solved_body)
    )
    namespace: dict = {"__name__": "__main__", "LIMIT": limit}
    exec(compile(textwrap.dedent(HELPER[helper] + source), "<cell>", "exec"), namespace)
    return vf.Rubric([namespace["solved"], namespace["efficiency"], namespace["length"]])


def _diff(old: vf.Rubric, new: vf.Rubric) -> list[str]:
    return fingerprint_diff(
        {"rubric": rubric_fingerprint(old)}, {"rubric": rubric_fingerprint(new)}
    )


def test_a_changed_helper_is_named_with_the_functions_that_use_it():
    assert _diff(_rubric("v1"), _rubric("v2")) == [
        "reward code changed since the saved run: answer_of changed; used by solved, efficiency"
    ]


def test_a_function_s_own_change_is_named_alone_and_beside_a_changed_helper():
    own = "return float(answer_of(completion) != answer)"
    assert _diff(_rubric(), _rubric(solved_body=own)) == [
        "reward code changed since the saved run: solved"
    ]
    assert _diff(_rubric(limit=80), _rubric(limit=40)) == [
        "reward code changed since the saved run: length"
    ]
    assert _diff(_rubric("v1"), _rubric("v2", solved_body=own)) == [
        "reward code changed since the saved run: answer_of changed; used by solved, efficiency",
        "reward code changed since the saved run: solved",
    ]


def test_in_an_environment_group_the_helper_is_named_by_its_task():
    def group(rubric: vf.Rubric) -> vf.EnvGroup:
        rows = [{"question": "q", "answer": "a"}]
        return vf.EnvGroup(
            [
                vf.SingleTurnEnv(dataset=rows, rubric=rubric),
                vf.SingleTurnEnv(dataset=rows, rubric=_rubric("v1")),
            ],
            names=["hint", "plain"],
        )

    old, new = group(_rubric("v1")).rubric, group(_rubric("v2")).rubric
    assert _diff(old, new) == [
        "reward code changed since the saved run: hint/answer_of changed; used by hint/solved, hint/efficiency"
    ]
