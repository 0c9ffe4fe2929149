"""Real SIGTERM to a server process with rollouts in flight."""

from __future__ import annotations

import asyncio
import re
import signal
import time
from typing import Any

import httpx
from srv_helpers import script

from verifiers_lite.remote import RolloutClient
from verifiers_lite.server.lifecycle import Lifecycle, ShutdownTimeouts
from verifiers_lite.server.service import RolloutService
from verifiers_lite.protocol import LEASE_HEADER, RolloutRequest

MSGS = [{"role": "user", "content": "6*7?"}]
URL = "http://127.0.0.1:9/v1"


def phases(log: str) -> list[str]:
    return re.findall(r"shutdown phase: (\w+)", log)


async def test_sigterm_drains_then_cancels_with_default_timeouts(spawn: Any) -> None:
    srv = spawn()  # default phases: 10 s drain, 120 s cleanup, 10 s final
    async with RolloutClient(srv.url) as client:
        quick = await client.run_rollout_async(
            initial_messages=MSGS, chat_completions_url=URL, rollout_id="quick",
            metadata=script(run_sec=1.5), grade=False,
        )
        slow = await client.run_rollout_async(
            initial_messages=MSGS, chat_completions_url=URL, rollout_id="slow",
            metadata=script(run_sec=120, cleanup_sec=0.5), grade=False,
        )
        await slow.wait_for_running()
        sent = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        await asyncio.sleep(0.3)
        async with httpx.AsyncClient(base_url=srv.url) as http:
            refused = await http.post("/rollout", json={
                "initial_messages": MSGS, "rollout_id": "late", "chat_completions_url": URL})
            assert refused.status_code == 503
            health = (await http.get("/health")).json()
            assert health["lifecycle"] == {"accepting_rollouts": False, "active_rollouts": 2}
        # Finished during the drain: still retrievable after SIGTERM.
        assert (await quick).status == "success"
        assert time.monotonic() - sent < 5
        # Not finished within 10 s: cooperative cancellation, then its terminal result.
        cancelled = await slow
        assert cancelled.status == "cancelled"
        assert 9.5 < time.monotonic() - sent < 13
    rc = await asyncio.to_thread(srv.proc.wait, 10)
    assert rc == 0
    assert phases(srv.log()) == [
        "stop_admission", "drain", "request_cancel", "cleanup", "close_registry",
        "backend_shutdown", "done",
    ]
    events = srv.events()
    assert [e for e in events if e["event"] == "shutdown"] == [
        {"event": "shutdown", "t": events[-1]["t"], "calls": 1}
    ]
    assert [e["event"] for e in events if e.get("id") == "slow"] == ["start", "cancel", "end"]


async def test_sigterm_under_plain_uvicorn_releases_idle_long_polls(spawn: Any) -> None:
    srv = spawn(plain=1, drain=2)  # long polls would otherwise hold the exit for 30 s
    async with httpx.AsyncClient(base_url=srv.url, timeout=40) as http:
        acc = (await http.post("/rollout", json={
            "initial_messages": MSGS, "rollout_id": "held", "chat_completions_url": URL,
            "metadata": script(run_sec=120, cleanup_sec=0.2)})).json()
        await asyncio.sleep(0.3)
        poll = asyncio.create_task(http.get(
            "/rollout/held/result", params={"seen": "running"},
            headers={LEASE_HEADER: acc["polling_lease_token"]}))
        await asyncio.sleep(0.3)
        sent = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        resp = await poll
        assert resp.status_code == 503 and resp.headers["retry-after"]
        assert time.monotonic() - sent < 1.5
    await asyncio.to_thread(srv.proc.wait, 15)
    assert time.monotonic() - sent < 6
    assert phases(srv.log())[-2:] == ["backend_shutdown", "done"]
    assert [e["event"] for e in srv.events()].count("shutdown") == 1


async def test_phases_hard_cancel_what_ignores_cooperative_cancel() -> None:
    from srv_scripted import ScriptedBackend

    backend = ScriptedBackend(max_concurrent=2)
    service = RolloutService(backend, polling_lease_timeout_sec=60, result_retention_sec=60)
    lifecycle = Lifecycle(service, ShutdownTimeouts(0.2, 0.2, 0.5))
    stubborn = service.admit(RolloutRequest(
        initial_messages=MSGS, rollout_id="stubborn", chat_completions_url=URL,
        metadata=script(run_sec=60, ignore_cancel=True)))
    queued = [service.admit(RolloutRequest(
        initial_messages=MSGS, rollout_id=f"q{i}", chat_completions_url=URL,
        metadata=script(run_sec=60))) for i in range(3)]
    await asyncio.sleep(0.05)
    await asyncio.gather(lifecycle.shutdown(), lifecycle.shutdown())
    assert lifecycle.phases == [
        "stop_admission", "drain", "request_cancel", "cleanup", "hard_cancel", "final_wait",
        "close_registry", "backend_shutdown", "done",
    ]
    assert backend.shutdown_calls == 1
    assert stubborn.result is not None and stubborn.result.status == "cancelled"
    assert {r.result.status for r in queued if r.result} == {"cancelled"}
    assert service.registry.active_count == 0
