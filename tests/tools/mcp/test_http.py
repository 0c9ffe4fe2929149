"""A streamable-HTTP MCP server on 127.0.0.1 (the example server under uvicorn, in a subprocess)
that refuses requests without a header: the configured headers reach it, its tools work."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest
from verifiers_lite_envs._mcp_server import http_server, stdio_server

import verifiers_lite as vf
from tests.tools.mcp.helpers import tool_texts
from verifiers_lite.testing.fake_server import FakeServerProcess, free_port
from verifiers_lite.testing.waiting import wait_until

TOKEN = {"X-Token": "s3cret"}


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def http_port() -> Iterator[int]:
    port = free_port()
    env = {**os.environ, **dict(stdio_server().env or {})}  # the same code as this process
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "verifiers_lite_envs._mcp_server",
            "--http",
            "--port",
            str(port),
            "--require-header",
            "X-Token: s3cret",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(
            lambda: proc.poll() is not None or _listening(port), "the MCP server listens", 60
        )
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        yield port
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stderr:
            proc.stderr.close()


def _boxed_reward(completion, answer) -> float:
    return float(vf.extract_boxed_answer(completion[-1]["content"] or "") == answer)


@pytest.mark.parametrize("lifetime", ["shared", "rollout"])
def test_fake_tool_model_over_streamable_http_with_headers(
    http_port: int, fake_server: FakeServerProcess, lifetime: str
) -> None:
    rows = [
        {"question": "What is 6 * 7?", "answer": "42"},
        {"question": "What is 90 - 45?", "answer": "45"},
    ]
    env = vf.ToolEnv(
        mcp_servers=[http_server(http_port, headers=TOKEN, lifetime=lifetime)],  # type: ignore[arg-type]
        dataset=rows,
        rubric=vf.Rubric([_boxed_reward]),
        max_turns=3,
    )
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-tool", rollouts_per_example=2
    )
    assert [r["reward"] for r in out.rows] == [1.0] * 4
    assert sorted(tool_texts(r)[0] for r in out.rows) == ["42", "42", "45", "45"]


def test_structured_results_and_state_over_http(http_port: int) -> None:
    calls = [
        [
            {"name": "add", "arguments": {"a": 20, "b": 22}},
            {"name": "kv_set", "arguments": {"key": "http", "value": "yes"}},
        ],
        [{"name": "kv_get", "arguments": {"key": "http"}}],
        None,
    ]
    env = vf.ToolEnv(
        mcp_servers=[http_server(http_port, headers=TOKEN)],
        dataset=[{"question": "q", "answer": ""}],
    )
    out = env.evaluate_sync(vf.ScriptedClient(["", "", "done"], tool_calls=calls), "scripted")
    assert tool_texts(out.rows[0]) == ["42", "stored http", "yes"]


def test_a_server_refusing_the_headers_is_an_error_naming_it_before_any_rollout(
    http_port: int,
) -> None:
    with pytest.raises(
        vf.ToolServerError,
        match="MCP server 'example-http' could not be started: MCPError: Server returned an error response",
    ):
        vf.ToolEnv(
            mcp_servers=[http_server(http_port, headers={"X-Token": "wrong"})],
            dataset=[{"question": "q", "answer": ""}],
        )
