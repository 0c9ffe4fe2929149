"""An inspect task with a tool: use_tools with an @tool function, generate's tool loop."""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, system_message, use_tools
from inspect_ai.tool import tool


@tool
def add():
    async def execute(x: int, y: int) -> str:
        """Add two integers.

        Args:
            x: the first integer
            y: the second integer
        """
        return str(x + y)

    return execute


@task
def adder() -> Task:
    return Task(
        dataset=[
            Sample(input=f"Use add to compute {a} and {b}.", target=str(a + b))
            for a, b in [(1, 2), (3, 4), (5, 9), (2, 2)]
        ],
        solver=[system_message("Use the tool."), use_tools(add()), generate()],
        scorer=includes(),
    )
