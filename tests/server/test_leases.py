"""Polling leases and stage timeouts over real processes: expiry cancels queued and running work,
is decided at the moment of a request, and does not hold up SIGTERM; queued time is not agent time.

The LocalBackend tests run ``vf-lite serve`` against the fake model server on 127.0.0.1, whose
request counter is the independent witness of what the server actually ran.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.helpers import ServerProc, script, start_serve
from verifiers_lite.remote import RolloutClient
from verifiers_lite.server.lifecycle import ShutdownTimeouts
from verifiers_lite.server.protocol import LEASE_HEADER
from verifiers_lite.testing.fake_server import FakeServerProcess

MSGS = [{"role": "user", "content": "What is 2 + 3?"}]
DRAIN_SEC = ShutdownTimeouts().drain_sec  # the budget for active work after SIGTERM


@pytest.fixture
def fake() -> Iterator[FakeServerProcess]:
    with FakeServerProcess() as f:
        yield f


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    started: list[ServerProc] = []

    def _serve(*args: str) -> ServerProc:
        srv = start_serve(tmp_path, *args)
        started.append(srv)
        return srv

    yield _serve
    for srv in started:
        srv.stop()


def rollout(rid: str, url: str, **kw: Any) -> dict[str, Any]:
    return {
        "initial_messages": MSGS,
        "rollout_id": rid,
        "chat_completions_url": url,
        "label": "5",
        "metadata": {"model": "fake-arith"},
        **kw,
    }


async def test_expired_leases_cancel_queued_work_and_sigterm_exits_within_the_drain_budget(
    fake: FakeServerProcess, serve: Any
) -> None:
    # One model call of 6 s; leases of 2 s, so the client polling r0 every 0.5 s keeps its lease on
    # a loaded machine, and the others lapse (and are swept) long before r0 frees the slot.
    fake.configure(latency_ms=6000)
    srv = serve(
        "arithmetic",
        "--max-concurrent",
        "1",
        "--max-queued",
        "10",
        "--polling-lease-timeout",
        "2",
        "--result-wait-timeout",
        "0.5",
    )
    async with (
        RolloutClient(srv.url) as client,
        httpx.AsyncClient(base_url=srv.url, timeout=10) as http,
    ):
        # r0 takes the only slot and is polled (its lease lives); seven more queue behind it
        # and nobody polls them: their leases lapse while r0 still holds the slot.
        running = await client.run_rollout_async(**rollout("r0", fake.base_url))
        tokens = {}
        for i in range(1, 8):
            resp = await http.post("/rollout", json=rollout(f"r{i}", fake.base_url))
            assert resp.status_code == 202
            tokens[f"r{i}"] = resp.json()["polling_lease_token"]
        await asyncio.sleep(2.4)  # the leases lapse: time passing is the scenario here
        for rid, token in tokens.items():
            data = (await http.get(f"/rollout/{rid}/result", headers={LEASE_HEADER: token})).json()
            assert (data["status"], data["err_category"]) == ("failure", "lease_expired"), rid
        sent = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        assert (await running).status == "success"  # finished during the drain, still delivered
    rc = await asyncio.to_thread(srv.proc.wait, DRAIN_SEC + 10)
    assert rc == 0
    assert time.monotonic() - sent < DRAIN_SEC
    # Only r0 ever reached the model: the slot it freed ran none of the expired rollouts.
    assert fake.stats()["requests"] == 1


async def test_expiry_is_decided_at_the_request(spawn: Any) -> None:
    # lease 4 s: the periodic sweep runs once a second, so a poll shortly after the deadline
    # would often come before it; the answer must not depend on that race.
    srv = spawn(wait=1, lease=4)
    offsets = [0.05, 0.2, 0.35, 0.5, 0.65, 0.8]
    async with httpx.AsyncClient(base_url=srv.url, timeout=10) as http:

        async def one(i: int, offset: float) -> dict[str, Any]:
            resp = await http.post(
                "/rollout",
                json={
                    "initial_messages": MSGS,
                    "rollout_id": f"late{i}",
                    "chat_completions_url": "http://127.0.0.1:9/v1",
                    "metadata": script(run_sec=30, cleanup_sec=0.1),
                    "grade": False,
                },
            )
            received = time.monotonic()  # the server's deadline is at most lease after this
            token = resp.json()["polling_lease_token"]
            await asyncio.sleep(
                resp.json()["polling_lease_timeout_sec"] + offset - (time.monotonic() - received)
            )
            poll = await http.get(f"/rollout/late{i}/result", headers={LEASE_HEADER: token})
            return dict(poll.json())

        answers = await asyncio.gather(*(one(i, off) for i, off in enumerate(offsets)))
    assert [(a["status"], a["err_category"]) for a in answers] == [("failure", "lease_expired")] * 6


async def test_queued_time_does_not_count_toward_the_agent_timeout(
    fake: FakeServerProcess, serve: Any
) -> None:
    fake.configure(latency_ms=600)
    srv = serve(
        "arithmetic",
        "--max-concurrent",
        "1",
        "--max-queued",
        "10",
        "--result-wait-timeout",
        "1",
        "--polling-lease-timeout",
        "30",
    )
    async with RolloutClient(srv.url) as client:
        first = [
            await client.run_rollout_async(
                initial_messages=MSGS,
                chat_completions_url=fake.base_url,
                rollout_id=f"a{i}",
                metadata={"model": "fake-arith"},
                grade=False,
            )
            for i in range(3)
        ]
        t0 = time.monotonic()
        # Queued behind three 0.6 s calls (1.8 s) with a 1 s agent timeout: runs 0.6 s, succeeds.
        patient = await client.run_rollout_async(
            initial_messages=MSGS,
            chat_completions_url=fake.base_url,
            rollout_id="patient",
            metadata={"model": "fake-arith"},
            grade=False,
            agent_timeout_sec=1.0,
        )
        # Its own 0.6 s call against a 0.3 s timeout: the timeout still bounds the running stage.
        hasty = await client.run_rollout_async(
            initial_messages=MSGS,
            chat_completions_url=fake.base_url,
            rollout_id="hasty",
            metadata={"model": "fake-arith"},
            grade=False,
            agent_timeout_sec=0.3,
        )
        ok = await patient
        waited = time.monotonic() - t0
        late = await hasty
        for h in first:
            assert (await h).status == "success"
    assert ok.status == "success" and ok.sample is not None
    assert waited > 1.0 + 0.6  # it spent longer than its timeout in total, most of it queued
    assert (late.status, late.err_category) == ("failure", "timeout")
    assert "agent did not finish within 0.3s" in (late.err_message or "")
