"""Every MCP server process a run starts is stopped when it ends: normally, by an exception, or
interrupted (a cancelled task, a KeyboardInterrupt in a sync call). Checked on the process table
(psutil), not on the library's own bookkeeping."""

from __future__ import annotations

import asyncio

import pytest

import verifiers_lite as vf
from tests.tools.mcp.helpers import new_tag, server_processes, tagged_server
from verifiers_lite.testing.waiting import wait_until_async

ROWS = [{"question": f"q{i}", "answer": ""} for i in range(3)]


def _env(tag: str, lifetime: str) -> vf.ToolEnv:
    return vf.ToolEnv(
        mcp_servers=[tagged_server(tag, lifetime=lifetime)], dataset=ROWS, max_turns=2
    )  # type: ignore[arg-type]


def _first_turn(call: dict, seen: list[int], tag: str):
    def script(messages):
        if sum(1 for m in messages if m["role"] == "assistant"):
            seen.append(len(server_processes(tag=tag)))  # after the call, while the run holds them
            return None
        return [call]

    return script


@pytest.mark.parametrize("lifetime", ["shared", "rollout"])
def test_no_server_process_is_left_after_a_run_ends(lifetime: str) -> None:
    tag = new_tag()
    env = _env(tag, lifetime)
    assert server_processes(tag=tag) == []  # listing the tools started and stopped one
    seen: list[int] = []
    call = {"name": "kv_incr", "arguments": {"key": "n"}}
    out = env.evaluate_sync(
        vf.ScriptedClient(["", "done"], tool_calls=_first_turn(call, seen, tag)), "scripted"
    )
    assert [r["error"] for r in out.rows] == [None] * 3
    assert seen and max(seen) >= 1  # the servers were running during the run ...
    assert server_processes(tag=tag) == []  # ... and none is left after it


class _Fatal(BaseException):
    """Not an Exception: no rollout records it as a row, so it ends the run (as a bug below the
    rollouts, a SystemExit or a MemoryError in the wrong place would)."""


@pytest.mark.parametrize("lifetime", ["shared", "rollout"])
def test_no_server_process_is_left_when_the_run_raises(lifetime: str) -> None:
    tag = new_tag()
    env = _env(tag, lifetime)

    def script(messages):
        if sum(1 for m in messages if m["role"] == "assistant"):
            assert server_processes(tag=tag)  # the servers run when the run breaks
            raise _Fatal("the run broke")
        return [{"name": "kv_incr", "arguments": {"key": "n"}}]

    with pytest.raises(_Fatal, match="the run broke"):
        env.evaluate_sync(vf.ScriptedClient(["", "done"], tool_calls=script), "scripted")
    assert server_processes(tag=tag) == []


@pytest.mark.parametrize("lifetime", ["shared", "rollout"])
async def test_no_server_process_is_left_when_the_run_is_cancelled_mid_call(lifetime: str) -> None:
    tag = new_tag()
    env = await asyncio.to_thread(
        _env, tag, lifetime
    )  # building lists the tools through the sync bridge
    hang = {"name": "hang", "arguments": {"seconds": 600}}
    client = vf.ScriptedClient(["", "done"], tool_calls=[[hang], None])
    run = asyncio.ensure_future(env.evaluate(client, "scripted"))
    await wait_until_async(
        lambda: client.requests == 3 and len(server_processes(tag=tag)) >= 1,
        "every rollout made its hanging call and a server runs",
        60,
    )
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert server_processes(tag=tag) == []


class _Interrupts:
    """A progress callback that raises KeyboardInterrupt (what Ctrl-C does to a sync call)."""

    def on_progress(self, stats, rows) -> None:
        raise KeyboardInterrupt


def test_no_server_process_is_left_after_a_keyboard_interrupt_in_a_sync_call() -> None:
    tag = new_tag()
    env = vf.ToolEnv(mcp_servers=[tagged_server(tag)], dataset=ROWS, max_turns=2, tool_timeout=600)

    def script(messages):  # the first example answers at once; the others hang in a tool call
        if sum(1 for m in messages if m["role"] == "assistant"):
            return None
        if messages[-1]["content"] == "q0":
            return [{"name": "add", "arguments": {"a": 1, "b": 2}}]
        return [{"name": "hang", "arguments": {"seconds": 600}}]

    with pytest.raises(KeyboardInterrupt):
        env.evaluate_sync(
            vf.ScriptedClient(["", "done"], tool_calls=script),
            "scripted",
            callbacks=[_Interrupts()],
        )
    assert server_processes(tag=tag) == []


def test_a_server_that_never_answers_the_handshake_is_an_error_and_is_stopped() -> None:
    import sys

    import psutil

    tag = new_tag()
    silent = vf.MCPStdioServer(
        command=sys.executable,
        args=["-c", "import time; time.sleep(120)", tag],
        name="silent",
        startup_timeout=1.0,
    )
    with pytest.raises(
        vf.ToolServerError,
        match="MCP server 'silent' did not complete the MCP handshake within startup_timeout=1s",
    ):
        vf.ToolEnv(mcp_servers=[silent], dataset=ROWS)
    left = [
        p
        for p in psutil.process_iter(["cmdline", "status"])
        if tag in (p.info["cmdline"] or []) and p.info["status"] != psutil.STATUS_ZOMBIE
    ]
    assert left == []
