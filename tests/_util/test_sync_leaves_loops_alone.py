"""The sync bridge owns no loop but its own: after ``*_sync`` calls from every kind of caller,
asyncio's global state is identical and ``asyncio.run``, ``asyncio.Runner`` and ``uvloop.run``
work as without the library."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading

import pytest

import verifiers_lite as vf
from tests.helpers.envs import make_env
from verifiers_lite.testing import loop_state


def _ok(out) -> bool:
    return len(out) == 2 and all(r["error"] is None for r in out.rows)


def test_nothing_patched_after_sync_calls_from_every_kind_of_caller(fake_server):
    uvloop = pytest.importorskip("uvloop")
    env, c = make_env(2), vf.ChatClient(fake_server.base_url)
    before = loop_state.snapshot()

    async def cell():  # a Jupyter cell: a loop already runs in this thread
        return env.evaluate_sync(c, "fake-arith", progress=False)

    results = [
        env.evaluate_sync(c, "fake-arith", progress=False),
        asyncio.run(cell()),
        uvloop.run(cell()),
    ]
    with asyncio.Runner() as runner:
        results.append(runner.run(cell()))
    box: list = []
    worker = threading.Thread(
        target=lambda: box.append(env.evaluate_sync(c, "fake-arith", progress=False))
    )
    worker.start()
    worker.join(60)
    results += box
    assert len(results) == 5 and all(_ok(out) for out in results)
    assert loop_state.changes(before, loop_state.snapshot()) == []
    assert fake_server.stats()["requests"] == 10


def test_the_snapshot_sees_a_patch():
    """The check above can fail: replacing asyncio.run or a loop method is seen, and undone."""
    before = loop_state.snapshot()
    original_run, original_once = asyncio.run, asyncio.BaseEventLoop._run_once
    try:
        asyncio.run = lambda *a, **k: None  # type: ignore[assignment]
        asyncio.BaseEventLoop._run_once = lambda self: None  # type: ignore[method-assign]
        assert loop_state.changes(before, loop_state.snapshot()) == [
            "asyncio.base_events.BaseEventLoop._run_once",
            "asyncio.run",
        ]
    finally:
        loop_state.restore(before)
    assert asyncio.run is original_run and asyncio.BaseEventLoop._run_once is original_once
    assert loop_state.changes(before, loop_state.snapshot()) == []


def test_uvloop_program_after_a_sync_call_inside_a_running_loop(fake_server):
    """In a fresh process: ``evaluate_sync`` from a running asyncio loop (what a notebook cell
    does), then a uvloop program, an ``asyncio.Runner`` with a uvloop factory and a plain
    ``asyncio.run``, each awaiting a real run."""
    pytest.importorskip("uvloop")
    script = textwrap.dedent(f"""
        import asyncio, uvloop
        import verifiers_lite as vf
        env = vf.SingleTurnEnv(dataset=[{{"question": f"{{i}} + 1"}} for i in range(2)],
                               rubric=vf.Rubric([lambda: 1.0]))
        url = {fake_server.base_url!r}

        async def cell():
            return env.evaluate_sync(url, "fake-arith", progress=False)

        async def main():
            await asyncio.sleep(0)
            return await env.evaluate(url, "fake-arith", progress=False)

        outs = [asyncio.run(cell()), uvloop.run(main())]
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            outs.append(runner.run(main()))
        outs.append(asyncio.run(main()))
        print([[r["error"] for r in out.rows] for out in outs])
    """)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == str([[None, None]] * 4)
    assert fake_server.stats()["requests"] == 8


def test_a_sync_call_made_from_inside_the_bridge_loop_does_not_deadlock(fake_server):
    """A synchronous helper that itself calls ``*_sync`` while running on the bridge's loop
    (a sync tool inside an async run) goes one loop deeper instead of waiting on itself."""
    env, c = make_env(2), vf.ChatClient(fake_server.base_url)

    async def outer():
        return env.evaluate_sync(c, "fake-arith", progress=False)

    async def cell():
        return vf.run_sync(outer())  # outer runs on the bridge loop, and calls the bridge again

    box: list = []
    caller = threading.Thread(target=lambda: box.append(asyncio.run(cell())), daemon=True)
    caller.start()
    caller.join(60)  # a deadlock blocks every loop involved: only a thread join can time out
    assert not caller.is_alive(), "the nested sync call deadlocked"
    assert _ok(box[0])
