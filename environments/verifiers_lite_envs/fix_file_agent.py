"""fix_file_agent: a shell-style agent program fixes a bug in a file of its working directory.

Measures whether a model, acting through shell commands, can repair a one-line bug. Each
example puts ``solution.py`` (a small function with one bug) in the rollout's working
directory; the program (``_programs/shell_agent.py``, the plain ``openai`` SDK with a ``shell``
tool) edits it with shell commands. The rubric runs the example's tests against the file the
program left, in the sandbox.

Reward: ``tests_pass`` (the edited ``solution.py`` passes its tests). Metric (weight 0):
``edited`` (the file changed at all).
"""

from __future__ import annotations

import sys
from typing import Any

import verifiers_lite as vf
from verifiers_lite.core.state import State
from verifiers_lite.sandbox import Sandbox, SandboxLimits

# (buggy source, tests): each bug is one operator or constant away from right.
PROBLEMS: list[tuple[str, str]] = [
    ("def add(a, b):\n    return a - b\n", "assert add(2, 3) == 5 and add(-1, 1) == 0"),
    ("def square(x):\n    return x * 2\n", "assert square(3) == 9 and square(4) == 16"),
    ("def is_even(n):\n    return n % 2 == 1\n", "assert is_even(4) and not is_even(3)"),
    ("def last(items):\n    return items[0]\n", "assert last([1, 2, 3]) == 3"),
    ("def double(x):\n    return x + 2\n", "assert double(5) == 10 and double(0) == 0"),
    ("def negate(x):\n    return x\n", "assert negate(4) == -4"),
]


def make_rows(num_examples: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(num_examples):
        source, tests = PROBLEMS[i % len(PROBLEMS)]
        name = source.split("(")[0].removeprefix("def ")
        rows.append(
            {
                "example_id": i,
                "question": (
                    f"The function `{name}` in solution.py has a bug. Fix the file so that "
                    f"this holds: {tests}"
                ),
                "answer": tests,
                "info": {"files": {"solution.py": source}},
                "task": "fix_file",
            }
        )
    return rows


def load_environment(
    num_examples: int = 6, max_calls: int = 8, timeout: float = 120.0
) -> vf.ProgramEnv:
    """Build the file-fixing agent environment.

    Args:
        num_examples: examples (the problems repeat past six).
        max_calls: model calls allowed per rollout.
        timeout: seconds a rollout's program may run.
    """
    if num_examples < 1:
        raise ValueError(f"num_examples must be >= 1, got {num_examples}")
    sandbox = Sandbox(SandboxLimits(timeout=10, cpu=10), pool_size=2)

    async def tests_pass(answer: str, state: State) -> float:
        """1.0 when the solution.py the program left passes the example's tests."""
        files = state["program"]["files"]  # type: ignore[typeddict-item]
        if "solution.py" not in files:
            return 0.0
        result = await sandbox.run(
            files["solution.py"] + "\n" + answer + "\nprint('tests passed')\n"
        )
        return 1.0 if result.ok and result.stdout.strip().endswith("tests passed") else 0.0

    def edited(state: State, info: dict[str, Any]) -> float:
        """1.0 when the program changed solution.py."""
        files = state["program"]["files"]  # type: ignore[typeddict-item]
        return 1.0 if files.get("solution.py") != info["files"]["solution.py"] else 0.0

    env = vf.ProgramEnv(
        [sys.executable, "-m", "verifiers_lite_envs._programs.shell_agent"],
        dataset=lambda: make_rows(num_examples),
        rubric=vf.Rubric([tests_pass, edited], weights=[1.0, 0.0]),
        limits=vf.Limits(turns=max_calls, time_s=timeout),
    )
    env.sandbox = sandbox  # type: ignore[attr-defined]
    return env
