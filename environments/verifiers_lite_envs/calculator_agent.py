"""calculator_agent: the calculator task solved by an agent program.

Measures whether a model driven by an agent program solves the calculator task (questions
from a seeded generator, as in ``calculator``: same seed, same questions). Each rollout runs a
program that reaches the run's model through the interception endpoint, every model call it
makes captured: ``sdk="openai"`` (default) a tool-call loop on the plain ``openai`` SDK
(``_programs/openai_calculator.py``), ``sdk="agents"`` an OpenAI Agents SDK agent with a
function tool on the Responses API (``_programs/agents_calculator.py``; the ``agents`` extra).

Reward: ``correct`` (its printed answer, read from ``\\boxed{}`` or the stated number, equals
the true result). Metric (weight 0): ``used_calculator`` (it called the tool).
"""

from __future__ import annotations

import sys
from typing import Any

import verifiers_lite as vf
from verifiers_lite._util.extras import is_installed, missing_dependency
from verifiers_lite.core.state import State

from ._common import NumberParser, answered
from .calculator import correct, make_rows


def used_calculator(state: State) -> float:
    """1.0 when the program's model asked for the calculator at least once."""
    calls: list[dict[str, Any]] = state.get("program_calls") or []  # type: ignore[assignment]
    return 1.0 if any(c["message"].get("tool_calls") for c in calls) else 0.0


_PROGRAMS = {
    "openai": "verifiers_lite_envs._programs.openai_calculator",
    "agents": "verifiers_lite_envs._programs.agents_calculator",
}


def load_environment(
    num_examples: int = 50,
    seed: int = 0,
    max_calls: int = 6,
    timeout: float = 120.0,
    sdk: str = "openai",
) -> vf.ProgramEnv:
    """Build the agent-program calculator environment.

    Args:
        num_examples: questions generated.
        seed: generator seed (same seed, same questions).
        max_calls: model calls allowed per rollout.
        timeout: seconds a rollout's program may run.
        sdk: the program: "openai" (the plain SDK) or "agents" (the OpenAI Agents SDK).
    """
    if num_examples < 1:
        raise ValueError(f"num_examples must be >= 1, got {num_examples}")
    if sdk not in _PROGRAMS:
        raise ValueError(f"sdk must be one of {', '.join(_PROGRAMS)}, got {sdk!r}")
    if sdk == "agents" and not is_installed("agents"):  # the program imports it, not the driver
        raise missing_dependency("the OpenAI Agents SDK calculator", "openai-agents", "agents")
    parser = NumberParser()
    rubric = vf.Rubric([correct, used_calculator, answered], weights=[1.0, 0.0, 0.0], parser=parser)
    return vf.ProgramEnv(
        [sys.executable, "-m", _PROGRAMS[sdk]],
        dataset=lambda: make_rows(num_examples, seed),
        parser=parser,
        rubric=rubric,
        limits=vf.Limits(turns=max_calls, time_s=timeout),
    )
