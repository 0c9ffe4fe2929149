"""python_math: reasoning-gym math tasks solved with a sandboxed Python tool over several turns.

Measures whether a model computes with code instead of in its head: it may call the ``python``
tool (a persistent sandboxed interpreter per rollout, variables kept between calls) and must
give its final answer inside ``<answer></answer>``. The tasks (default: ``lcm``, ``gcd`` and
``products`` with large operands, hard to do mentally) come from reasoning-gym, generated
offline and deterministically per seed, and each task's own scorer gives the reward.

Reward: ``rg_score`` (reasoning-gym's score of the answer, in [0, 1]). Metric (weight 0):
``used_python`` (at least one tool call).
"""

from __future__ import annotations

from typing import Any

import verifiers_lite as vf
from verifiers_lite._util.extras import require
from verifiers_lite.core.state import State
from verifiers_lite.sandbox import Sandbox, SandboxLimits

from .reasoning_gym import AnswerTagParser

SYSTEM_PROMPT = (
    "Solve the problem. You can run Python with the python tool (variables persist between "
    "calls; print what you need). Give only the final answer inside <answer></answer> tags."
)
DEFAULT_TASKS: dict[str, dict[str, Any]] = {
    "lcm": {"min_value": 100, "max_value": 10_000},
    "gcd": {"min_value": 1_000, "max_value": 1_000_000},
    "products": {"min_digits": 3, "max_digits": 4},
}


def load_environment(
    tasks: str | list[str] = "lcm,gcd,products",
    num_examples: int = 30,
    seed: int = 0,
    max_turns: int = 4,
    max_tokens: int = 256,
    timeout: float = 10.0,
    system_prompt: str = SYSTEM_PROMPT,
    sandbox: Sandbox | None = None,
) -> vf.ToolEnv:
    """Build the python_math environment.

    Args:
        tasks: reasoning-gym task names, comma-separated or a list (examples alternate between
            them; the three defaults use larger operands than reasoning-gym's own defaults).
        num_examples: examples generated in all.
        seed: reasoning-gym's seed (same seed, same examples).
        max_turns: model turns allowed (tool calls included).
        max_tokens: completion budget per turn.
        timeout: wall-clock seconds allowed to one python call.
        system_prompt: the system message.
        sandbox: a Sandbox to share (default: one with ``timeout``).
    """
    names = [t.strip() for t in tasks.split(",")] if isinstance(tasks, str) else list(tasks)
    if not names or not all(names):
        raise ValueError(f"tasks must name at least one reasoning-gym task, got {tasks!r}")
    if num_examples < 1:
        raise ValueError(f"num_examples must be >= 1, got {num_examples}")
    datasets, picks = _generate(names, num_examples, seed)
    entries = [datasets[name][j] for name, j in picks]

    def rows() -> list[dict[str, Any]]:
        return [
            {
                "example_id": i,
                "question": e["question"],
                "answer": str(e["answer"]),
                "info": {"rg_task": name, "rg_index": i},
                "task": name,
            }
            for i, ((name, _), e) in enumerate(zip(picks, entries, strict=True))
        ]

    parser = AnswerTagParser()
    box = sandbox or Sandbox(SandboxLimits(timeout=timeout, cpu=timeout))
    return vf.PythonEnv(
        dataset=rows,
        sandbox=box,
        system_prompt=system_prompt,
        parser=parser,
        rubric=_rubric(datasets, entries, parser),
        max_turns=max_turns,
        sampling_args={"max_tokens": max_tokens},
    )


def _generate(
    names: list[str], num_examples: int, seed: int
) -> tuple[dict[str, Any], list[tuple[str, int]]]:
    """reasoning-gym's dataset of each task, and which task and index each example takes
    (examples alternate between the tasks)."""
    rg = require("reasoning_gym", "python_math", "envs", package="reasoning-gym")
    datasets = {}
    for name in names:
        size = -(-num_examples // len(names))
        try:
            datasets[name] = rg.create_dataset(
                name, size=size, seed=seed, **DEFAULT_TASKS.get(name, {})
            )
        except Exception as exc:  # unknown names and bad options come back as assorted errors
            raise ValueError(f"reasoning-gym could not build task {name!r}: {exc}") from exc
    picks = [(names[i % len(names)], i // len(names)) for i in range(num_examples)]
    return datasets, picks


def _rubric(datasets: dict[str, Any], entries: list[Any], parser: vf.Parser) -> vf.Rubric:
    """reasoning-gym's score of the answer (weight 1) and whether the model ran code (0)."""

    def rg_score(completion: Any, info: dict[str, Any], parser: vf.Parser) -> float:
        """reasoning-gym's own score of the answer (0 when none could be read)."""
        answer = parser.parse_answer(completion)
        if answer is None:
            return 0.0
        i = int(info["rg_index"])
        score = datasets[info["rg_task"]].score_answer(answer=answer, entry=entries[i])
        return min(1.0, max(0.0, float(score or 0.0)))

    def used_python(state: State) -> float:
        """1.0 when the model ran code at least once."""
        return 1.0 if any(m.get("tool_calls") for m in state.get("completion") or []) else 0.0

    return vf.Rubric([rg_score, used_python], weights=[1.0, 0.0], parser=parser)
