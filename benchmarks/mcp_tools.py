"""What an MCP tool costs next to a Python tool: server start, one call, calls in flight.

The example server (``verifiers_lite_envs._mcp_server``) over stdio, its ``add`` tool called
through the library's one tool path (``answer_tool_call``, as ``ToolEnv`` and ``ToolManager``
call it), side by side with the same function as a Python tool; then whole rollouts of a
``ToolEnv`` driven by a scripted model, with a shared server, a per-rollout one, and a Python
tool. Figures are wall time on this machine (print the load beside them).

    python benchmarks/mcp_tools.py [--calls 500] [--in-flight 32] [--rollouts 16]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from verifiers_lite_envs._mcp_server import stdio_server

import verifiers_lite as vf
from verifiers_lite.tools.functions import answer_tool_call
from verifiers_lite.tools.mcp import MCPToolset


def add(a: int, b: int) -> int:
    """The sum of two integers."""
    return a + b


async def _start_times(n: int) -> list[float]:
    from verifiers_lite.tools.mcp.connection import MCPConnection

    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        conn = await MCPConnection(stdio_server()).open()
        times.append(time.perf_counter() - t0)
        await conn.aclose()
    return times


async def _calls(tools: dict, calls: int, in_flight: int) -> tuple[float, float]:
    """(median seconds per sequential call, calls per second with ``in_flight`` at once)."""
    one = []
    for i in range(calls):
        t0 = time.perf_counter()
        text, error = await answer_tool_call(tools, "add", {"a": i, "b": 1})
        one.append(time.perf_counter() - t0)
        assert error is None and text == str(i + 1), (text, error)
    gate = asyncio.Semaphore(in_flight)

    async def call(i: int) -> None:
        async with gate:
            await answer_tool_call(tools, "add", {"a": i, "b": 1})

    t0 = time.perf_counter()
    await asyncio.gather(*(call(i) for i in range(calls)))
    return statistics.median(one), calls / (time.perf_counter() - t0)


def _rollouts(env: vf.ToolEnv, n: int) -> float:
    calls = [[{"name": "add", "arguments": {"a": 2, "b": 3}}], None]
    t0 = time.perf_counter()
    out = env.evaluate_sync(
        vf.ScriptedClient(["", "done"], tool_calls=calls),
        "scripted",
        rollouts_per_example=n,
        progress=False,
    )
    assert all(r["error"] is None for r in out.rows)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--rollouts", type=int, default=16)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

    starts = vf.run_sync(_start_times(3))
    print(
        f"stdio server start + handshake: median {statistics.median(starts):.2f} s (of {len(starts)})"
    )

    toolset = MCPToolset([stdio_server()])
    mcp_tools = {t.name: t for t in toolset.tools}

    async def both() -> tuple[tuple[float, float], tuple[float, float]]:
        ours = await _calls(mcp_tools, args.calls, args.in_flight)
        await toolset.aclose()
        return ours, await _calls({"add": add}, args.calls, args.in_flight)

    (mcp_one, mcp_rate), (py_one, py_rate) = vf.run_sync(both())
    print(f"{'':28}{'MCP (stdio)':>14}{'Python':>14}")
    print(f"{'one call, median':28}{mcp_one * 1e3:>11.2f} ms{py_one * 1e3:>11.3f} ms")
    print(f"{f'calls/s, {args.in_flight} in flight':28}{mcp_rate:>14.0f}{py_rate:>14.0f}")

    rows = [{"question": "q", "answer": ""}]
    envs = {
        "MCP, shared server": vf.ToolEnv(mcp_servers=[stdio_server()], dataset=rows),
        "MCP, server per rollout": vf.ToolEnv(
            mcp_servers=[stdio_server(lifetime="rollout")], dataset=rows
        ),
        "Python tool": vf.ToolEnv(tools=[add], dataset=rows),
    }
    print(
        f"\n{args.rollouts} rollouts of one tool call each (wall time, servers started and stopped included)"
    )
    for name, env in envs.items():
        print(f"  {name:26}{_rollouts(env, args.rollouts):>8.2f} s")


if __name__ == "__main__":
    main()
