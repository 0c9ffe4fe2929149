"""Real SIGTERM to a server process with rollouts in flight."""

from __future__ import annotations

import asyncio
import re
import signal
import time
from typing import Any

import httpx

from tests.server.helpers import script
from verifiers_lite.remote import RolloutClient
from verifiers_lite.server.lifecycle import Lifecycle, ShutdownTimeouts
from verifiers_lite.server.protocol import LEASE_HEADER, RolloutRequest
from verifiers_lite.server.service import RolloutService
from verifiers_lite.testing.clock import ManualClock
from verifiers_lite.testing.waiting import wait_until_async

MSGS = [{"role": "user", "content": "6*7?"}]
URL = "http://127.0.0.1:9/v1"


def phases(log: str) -> list[str]:
    return re.findall(r"shutdown phase: (\w+)", log)


async def test_sigterm_drains_then_cancels_with_default_timeouts(spawn: Any) -> None:
    srv = spawn()  # default phases: 10 s drain, 120 s cleanup, 10 s final
    async with RolloutClient(srv.url) as client, httpx.AsyncClient(base_url=srv.url) as http:
        quick = await client.run_rollout_async(  # ends during the drain, whatever the load
            initial_messages=MSGS,
            chat_completions_url=URL,
            rollout_id="quick",
            metadata=script(run_sec=4),
            grade=False,
        )
        slow = await client.run_rollout_async(
            initial_messages=MSGS,
            chat_completions_url=URL,
            rollout_id="slow",
            metadata=script(run_sec=120, cleanup_sec=0.5),
            grade=False,
        )
        await slow.wait_for_running()
        sent = time.time()  # the server's events carry wall-clock times
        srv.proc.send_signal(signal.SIGTERM)

        async def admission_closed() -> bool:
            return (await http.get("/health")).json()["lifecycle"]["accepting_rollouts"] is False

        await wait_until_async(admission_closed, "the server stops admitting after SIGTERM")
        refused = await http.post(
            "/rollout",
            json={"initial_messages": MSGS, "rollout_id": "late", "chat_completions_url": URL},
        )
        assert refused.status_code == 503
        health = (await http.get("/health")).json()
        assert health["lifecycle"] == {"accepting_rollouts": False, "active_rollouts": 2}
        # Finished during the drain: still retrievable after SIGTERM.
        assert (await quick).status == "success"
        # Not finished within the drain: cooperative cancellation, then its terminal result.
        assert (await slow).status == "cancelled"
    rc = await asyncio.to_thread(srv.proc.wait, 10)
    assert rc == 0
    assert phases(srv.log()) == [
        "stop_admission",
        "drain",
        "request_cancel",
        "cleanup",
        "close_registry",
        "backend_shutdown",
        "done",
    ]
    events = srv.events()
    assert [e for e in events if e["event"] == "shutdown"] == [
        {"event": "shutdown", "t": events[-1]["t"], "calls": 1}
    ]
    assert [e["event"] for e in events if e.get("id") == "quick"] == ["start", "end"]
    assert [e["event"] for e in events if e.get("id") == "slow"] == ["start", "cancel", "end"]
    cancel_at = next(e["t"] for e in events if e["event"] == "cancel")
    # Cancelled when the 10 s drain ran out: not before, and not at the 120 s cleanup's end.
    assert 9.9 <= cancel_at - sent < 60


async def test_sigterm_under_plain_uvicorn_releases_idle_long_polls(spawn: Any) -> None:
    srv = spawn(plain=1, drain=6)  # long polls would otherwise hold the exit for 30 s
    async with httpx.AsyncClient(base_url=srv.url, timeout=40) as http:
        acc = (
            await http.post(
                "/rollout",
                json={
                    "initial_messages": MSGS,
                    "rollout_id": "held",
                    "chat_completions_url": URL,
                    "metadata": script(run_sec=120, cleanup_sec=0.2),
                },
            )
        ).json()
        lease = {LEASE_HEADER: acc["polling_lease_token"]}
        started = await http.get("/rollout/held/result", params={"seen": "queued"}, headers=lease)
        assert started.json()["status"] == "running"
        poll = asyncio.create_task(
            http.get("/rollout/held/result", params={"seen": "running"}, headers=lease)
        )

        async def parked() -> bool:
            return (await http.get("/health")).json()["held_polls"] == 1

        await wait_until_async(parked, "the long poll is parked on the server")
        sent = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        resp = await poll
        assert resp.status_code == 503 and resp.headers["retry-after"]
        assert time.monotonic() - sent < 4  # released at the signal, not when the 6 s drain ends
    await asyncio.to_thread(srv.proc.wait, 30)
    assert time.monotonic() - sent < 25  # the drain and a short cleanup, not the 30 s result wait
    assert phases(srv.log())[-2:] == ["backend_shutdown", "done"]
    assert [e["event"] for e in srv.events()].count("shutdown") == 1


async def _let_the_loop_run() -> None:
    """Give every ready task its turn (a few loop iterations; no time passes on any clock)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def test_phases_wait_on_the_clock_and_hard_cancel_what_ignores_cooperative_cancel() -> None:
    from tests.server.scripted_server import ScriptedBackend

    clock = ManualClock()
    backend = ScriptedBackend(max_concurrent=2)
    service = RolloutService(
        backend, polling_lease_timeout_sec=3600, result_retention_sec=3600, clock=clock
    )
    lifecycle = Lifecycle(service, ShutdownTimeouts())  # 10 s drain, 120 s cleanup, 10 s final
    stubborn = service.admit(
        RolloutRequest(
            initial_messages=MSGS,
            rollout_id="stubborn",
            chat_completions_url=URL,
            metadata=script(run_sec=600, ignore_cancel=True),
        )
    )
    polite = [
        service.admit(
            RolloutRequest(
                initial_messages=MSGS,
                rollout_id=f"q{i}",
                chat_completions_url=URL,
                metadata=script(run_sec=600),
            )
        )
        for i in range(3)
    ]
    await wait_until_async(lambda: backend.running == 2, "both slots taken, two rollouts queued")
    sweeper = clock.waiting
    shutdown = asyncio.gather(lifecycle.shutdown(), lifecycle.shutdown())
    await wait_until_async(lambda: clock.waiting == sweeper + 1, "the drain waits on the clock")
    assert lifecycle.phases == ["stop_admission", "drain"]
    clock.advance(9.9)
    await _let_the_loop_run()
    assert lifecycle.phases[-1] == "drain"
    clock.advance(0.1)  # the drain runs out: cooperative cancellation of all four
    await wait_until_async(
        lambda: service.registry.active_count == 1, "only the stubborn rollout left"
    )
    await wait_until_async(lambda: clock.waiting == sweeper + 1, "the cleanup waits on the clock")
    assert lifecycle.phases[-2:] == ["request_cancel", "cleanup"]
    assert [r.result.status if r.result else None for r in polite] == ["cancelled"] * 3
    clock.advance(119.9)
    await _let_the_loop_run()
    assert lifecycle.phases[-1] == "cleanup" and stubborn.active
    clock.advance(0.1)  # the cleanup runs out: hard cancellation
    await asyncio.wait_for(shutdown, 30)
    assert lifecycle.phases == [
        "stop_admission",
        "drain",
        "request_cancel",
        "cleanup",
        "hard_cancel",
        "final_wait",
        "close_registry",
        "backend_shutdown",
        "done",
    ]
    assert backend.shutdown_calls == 1
    assert stubborn.result is not None and stubborn.result.status == "cancelled"
    assert service.registry.active_count == 0
