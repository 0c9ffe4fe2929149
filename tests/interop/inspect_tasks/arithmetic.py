"""Inspect tasks over sums: a Sample list, a system message and chain of thought, match and
includes scorers, two epochs."""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser
from inspect_ai.scorer import includes, match
from inspect_ai.solver import chain_of_thought, generate, prompt_template, system_message


@task
def sums(n: int = 4, epochs: int = 2, system: str = "Answer with the number.") -> Task:
    return Task(
        dataset=[
            Sample(
                input=f"What is {i} + {i + 3}?",
                target=str(2 * i + 3),
                id=f"s{i}",
                metadata={"a": i},
            )
            for i in range(n)
        ],
        solver=[system_message(system), chain_of_thought(), generate()],
        scorer=[match(), includes()],
        epochs=epochs,
    )


@task
def products(unit: str = "apples") -> Task:
    """A chat-message input, a system message and a template with parameters of their own."""
    return Task(
        dataset=[
            Sample(
                input=[ChatMessageUser(content=f"What is {a} * {b}?")],
                target=[str(a * b), f"{a * b} {unit}"],
                id=a,
            )
            for a, b in [(2, 3), (4, 5), (6, 7), (3, 3)]
        ],
        solver=[
            system_message("Count {unit}.", unit=unit),
            prompt_template("{prompt} Answer in {unit}.", unit=unit),
            generate(),
        ],
        scorer=[match(location="any"), includes(ignore_case=False)],
    )
