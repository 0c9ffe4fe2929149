"""A calculator agent written with the OpenAI Agents SDK (``openai-agents``).

An ``Agent`` with one function tool, run by ``Runner`` on the SDK's default model API (the
Responses API). The SDK's client reads ``OPENAI_BASE_URL``/``OPENAI_API_KEY`` from the
environment; tracing is off (it would upload traces to OpenAI).
"""

from __future__ import annotations

import os
import sys

from agents import Agent, Runner, function_tool, set_tracing_disabled

from verifiers_lite_envs.calculator import SYSTEM_PROMPT
from verifiers_lite_envs.calculator import calculator as evaluate


@function_tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression such as "(12 + 7) * 3".

    Args:
        expression: numbers with + - * / // % ** and parentheses.
    """
    return evaluate(expression)


def main() -> None:
    set_tracing_disabled(True)
    agent = Agent(
        name="calculator",
        instructions=SYSTEM_PROMPT,
        tools=[calculator],
        model=os.environ.get("VF_MODEL", "gpt-4o-mini"),
    )
    result = Runner.run_sync(agent, sys.stdin.read(), max_turns=4)
    print(result.final_output)


if __name__ == "__main__":
    main()
