"""An inspect task of multiple-choice questions: the multiple_choice solver, the choice scorer."""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice

QUESTIONS = [
    ("Which is a prime number?", ["4", "6", "7", "9"], "C"),
    ("Which is even?", ["3", "8", "5"], "B"),
    ("Which colour is the sky on a clear day?", ["blue", "green", "red", "black"], "A"),
    ("Which is larger than ten?", ["2", "11"], "B"),
    ("Which animal barks?", ["cat", "cow", "dog"], "C"),
]


@task
def mcq(cot: bool = False) -> Task:
    return Task(
        dataset=[
            Sample(input=q, choices=c, target=t, id=i) for i, (q, c, t) in enumerate(QUESTIONS, 1)
        ],
        solver=multiple_choice(cot=cot),
        scorer=choice(),
        epochs=2,
    )
