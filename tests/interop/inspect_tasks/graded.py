"""Inspect tasks graded by a model (the judge is the model evaluated, as inspect defaults):
model_graded_qa and model_graded_fact; self_critique; the answer and match scorers."""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import answer, match, model_graded_fact, model_graded_qa
from inspect_ai.solver import chain_of_thought, generate, self_critique

FACTS = [
    ("What is 2 + 2?", "4"),
    ("What is 10 - 3?", "7"),
    ("What is 6 * 7?", "42"),
    ("What is 8 + 5?", "13"),
]


@task
def graded_qa() -> Task:
    return Task(
        dataset=[Sample(input=q, target=t, id=i) for i, (q, t) in enumerate(FACTS)],
        solver=[generate()],
        scorer=[model_graded_qa(), model_graded_fact()],
    )


@task
def critiqued(epochs: int = 2) -> Task:
    return Task(
        dataset=[Sample(input=q, target=t, id=i) for i, (q, t) in enumerate(FACTS)],
        solver=[chain_of_thought(), generate(), self_critique()],
        scorer=[match(numeric=True), answer("line")],
        epochs=epochs,
    )
