"""MCP tools in a real Jupyter kernel: ``evaluate_sync`` in a cell (the sync bridge's background
loop) and ``await env.evaluate`` (the kernel's own loop), twice each; no server left after."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.helpers.paths import REPO
from tests.tools.mcp.helpers import server_processes

pytestmark = pytest.mark.slow

SETUP = """
import json, sys
sys.path[:0] = [{repo!r}, {envs!r}]
import verifiers_lite as vf
from verifiers_lite_envs._mcp_server import stdio_server
rows = [{{"question": "What is 21 * 2?", "answer": "42"}}, {{"question": "What is 50 - 8?", "answer": "42"}}]
def boxed(completion, answer):
    return float(vf.extract_boxed_answer(completion[-1]["content"] or "") == answer)
env = vf.ToolEnv(mcp_servers=[stdio_server(extra_args=("--tag", {tag!r}))], dataset=rows,
                 rubric=vf.Rubric([boxed]), max_turns=3)
client = vf.ChatClient({url!r})
"""


def test_mcp_tool_env_in_notebook_cells(kernel, fake_server):
    tag = uuid.uuid4().hex
    kernel.run(
        SETUP.format(
            repo=str(REPO), envs=str(REPO / "environments"), tag=tag, url=fake_server.base_url
        )
    )
    for cell in (
        "out = env.evaluate_sync(client, 'fake-tool', rollouts_per_example=2, progress=False)",
        "out = await env.evaluate(client, 'fake-tool', rollouts_per_example=2, progress=False)",
    ) * 2:
        out = kernel.run(cell + "\nprint(json.dumps([r['reward'] for r in out.rows]))")
        assert json.loads(out["stdout"].strip().splitlines()[-1]) == [1.0, 1.0, 1.0, 1.0]
        assert server_processes(tag=tag) == []  # each run stopped its server, the kernel lives on
