"""osmosis-ai's own rollout server (``create_rollout_server`` + its ``LocalBackend``), run by the
osmosis venv's Python for the interoperability tests. The workflow calls no model: it answers
``What is A + B?`` with ``\\boxed{A + B}`` when A is even and ``\\boxed{A + B + 1}`` when A is
odd, and never finishes on a prompt that says ``hang``; the grader gives 1.0 when the boxed
number equals the label.

usage: osmosis_server.py PORT API_KEY
"""

from __future__ import annotations

import asyncio
import re
import sys

import uvicorn
from osmosis_ai.rollout import AgentWorkflow, Grader, LocalBackend
from osmosis_ai.rollout.server.app import create_rollout_server


class Arithmetic(AgentWorkflow):
    async def run(self, ctx):
        question = ctx.prompt[-1]["content"]
        if "hang" in question:
            await asyncio.sleep(3600)
        a, b = map(int, re.findall(r"-?\d+", question)[:2])
        answer = a + b + (a % 2)
        return [*ctx.prompt, {"role": "assistant", "content": f"\\boxed{{{answer}}}"}]


class Boxed(Grader):
    async def grade(self, ctx):
        found = re.findall(r"\\boxed\{(-?\d+)\}", ctx.sample.messages[-1]["content"])
        ctx.set_reward(1.0 if found and found[-1] == ctx.label else 0.0)


if __name__ == "__main__":
    port, key = int(sys.argv[1]), sys.argv[2]
    app = create_rollout_server(
        backend=LocalBackend(workflow=Arithmetic, grader=Boxed),
        api_key=key,
        result_wait_timeout_sec=2,
        polling_lease_timeout_sec=30,
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
