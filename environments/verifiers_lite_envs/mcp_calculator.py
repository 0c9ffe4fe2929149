"""mcp_calculator: tool use through an MCP server (a calculator and a key-value store).

The calculator task of the ``calculator`` environment, with its tools served by the small MCP
server shipped in this package (``verifiers_lite_envs._mcp_server``, started over stdio with
this Python): ``calculator``, ``add`` and a key-value store (``kv_set``, ``kv_get``,
``kv_incr``). ``lifetime="rollout"`` gives each rollout a server of its own, so no rollout sees
what another stored; ``"shared"`` (default) runs one for the whole run.

Reward: ``correct`` (final answer equals the true result). Metric (weight 0): ``used_calculator``.
"""

from __future__ import annotations

import verifiers_lite as vf
from verifiers_lite.tools.mcp import Lifetime

from ._common import NumberParser, answered
from ._mcp_server import stdio_server
from .calculator import correct, make_rows, used_calculator

SYSTEM_PROMPT = (
    "You can call tools served by an MCP server: a calculator and a key-value store. Use the "
    "calculator, then give the final result as \\boxed{result}."
)


def load_environment(
    num_examples: int = 20,
    seed: int = 0,
    max_turns: int = 4,
    max_tokens: int = 128,
    lifetime: Lifetime = "shared",
    system_prompt: str = SYSTEM_PROMPT,
) -> vf.ToolEnv:
    """Build the MCP calculator environment.

    Args:
        num_examples: questions generated.
        seed: generator seed (same seed, same questions).
        max_turns: model turns allowed (tool calls included).
        max_tokens: completion budget per turn.
        lifetime: "shared" (one server for the run) or "rollout" (one per rollout).
        system_prompt: the system message.
    """
    if num_examples < 1:
        raise ValueError(f"num_examples must be >= 1, got {num_examples}")
    parser = NumberParser()
    rubric = vf.Rubric([correct, used_calculator, answered], weights=[1.0, 0.0, 0.0], parser=parser)
    return vf.ToolEnv(
        mcp_servers=[stdio_server(lifetime=lifetime, name="mcp_calculator")],
        dataset=lambda: [
            {**row, "task": "mcp_calculator"} for row in make_rows(num_examples, seed)
        ],
        system_prompt=system_prompt,
        parser=parser,
        rubric=rubric,
        max_turns=max_turns,
        sampling_args={"max_tokens": max_tokens},
    )
