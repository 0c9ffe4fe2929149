"""A server written for mcp 1.x (``from mcp.server.fastmcp import FastMCP``), run as the tools
guide says: with an interpreter that has mcp 1.x as ``command``. verifiers 0.3.1's reference venv
has mcp 1.30, so its Python plays that interpreter; verifiers_lite's own Python (mcp 2.x) cannot
import the server at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import verifiers_lite as vf
from tests.helpers.paths import ORACLE_PYTHON

SERVER = """
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("weather")


@mcp.tool()
def forecast(city: str, days: int = 1) -> str:
    \"\"\"Forecast for a city over the next days.\"\"\"
    return f"{city}: sunny for {days} day(s)"


if __name__ == "__main__":
    mcp.run()
"""


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    if not ORACLE_PYTHON.exists():
        message = (
            f"{ORACLE_PYTHON} (mcp 1.x) is not built; run bash .ci/install_verifiers_oracle.sh"
        )
        if os.environ.get("VF_REQUIRE_CLASSIC_ORACLE") == "1":
            pytest.fail(message)
        pytest.skip(message)
    path = tmp_path / "weather_server.py"
    path.write_text(textwrap.dedent(SERVER))
    return path


def test_an_mcp1_fastmcp_server_runs_under_its_own_interpreter(server_file: Path) -> None:
    own = subprocess.run(
        [sys.executable, str(server_file)], capture_output=True, text=True, timeout=60
    )
    assert own.returncode != 0 and "mcp.server.fastmcp" in own.stderr  # not under mcp 2.x

    weather = vf.MCPStdioServer(command=str(ORACLE_PYTHON), args=[str(server_file)], name="weather")

    def right(completion) -> float:
        replies = [m["content"] for m in completion if m["role"] == "tool"]
        return float(replies == ["Oslo: sunny for 2 day(s)"])

    env = vf.ToolEnv(
        mcp_servers=[weather],
        dataset=[{"question": "Weather in Oslo for 2 days?"}],
        rubric=vf.Rubric([right]),
        max_turns=3,
    )
    assert [t["function"]["name"] for t in env.tool_defs] == ["forecast"]
    schema = env.tool_defs[0]["function"]["parameters"]
    assert schema["required"] == ["city"] and schema["properties"]["days"]["default"] == 1

    def calls(messages):
        first = not any(m["role"] == "assistant" for m in messages)
        return [{"name": "forecast", "arguments": {"city": "Oslo", "days": 2}}] if first else None

    out = env.evaluate_sync(
        vf.ScriptedClient(["", "Sunny."], tool_calls=calls), "scripted", progress=False
    )
    assert out.rows[0]["error"] is None, json.dumps(out.rows[0]["error"])
    assert out.rewards == [1.0]
