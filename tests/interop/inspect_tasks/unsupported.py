"""Inspect tasks this library refuses: a solver of the task's own, a scorer it does not run."""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, accuracy, match, scorer
from inspect_ai.solver import Generate, TaskState, generate, solver


@solver
def shout():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.user_prompt.text = state.user_prompt.text.upper()
        return state

    return solve


@scorer(metrics=[accuracy()])
def always():
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=1)

    return score


@task
def own_solver() -> Task:
    return Task(
        dataset=[Sample(input="hi", target="hi")], solver=[shout(), generate()], scorer=match()
    )


@task
def own_scorer() -> Task:
    return Task(dataset=[Sample(input="hi", target="hi")], solver=generate(), scorer=always())
