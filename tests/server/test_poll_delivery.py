"""A held long poll answers when its rollout finishes, not when its wait runs out: real uvicorn
on 127.0.0.1, rollouts that finish when the test releases them, a result wait of ten minutes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.server.helpers import HeldBackend, held_request, serve_in_process
from verifiers_lite.server.protocol import LEASE_HEADER
from verifiers_lite.testing.waiting import wait_until_async

N = 200
WAIT_SEC = 600.0  # no answer can come from the wait running out within the test
BOUND_SEC = 30.0  # generous for a loaded machine; a twentieth of the wait


@pytest.fixture
async def held() -> AsyncIterator[tuple[HeldBackend, Any, httpx.AsyncClient]]:
    backend = HeldBackend()
    limits = httpx.Limits(
        max_connections=None, max_keepalive_connections=None
    )  # a poll is a connection
    async with (
        serve_in_process(
            backend, result_wait_timeout_sec=WAIT_SEC, polling_lease_timeout_sec=2 * WAIT_SEC
        ) as (service, url),
        httpx.AsyncClient(base_url=url, timeout=WAIT_SEC + 60, limits=limits) as http,
    ):
        yield backend, service, http


async def _held(service: Any, n: int) -> None:
    await wait_until_async(lambda: service.registry.held_polls == n, f"{n} polls held", 120)


async def test_each_held_poll_answers_soon_after_its_own_rollout_finishes(held: Any) -> None:
    backend, service, http = held
    ids = [f"r{i}" for i in range(N)]
    accepted = [(await http.post("/rollout", json=held_request(rid))).json() for rid in ids]
    answered_at: dict[str, float] = {}

    async def poll(a: dict[str, Any]) -> dict[str, Any]:
        r = await http.get(
            f"/rollout/{a['rollout_id']}/result",
            params={"wait": "terminal"},
            headers={LEASE_HEADER: a["polling_lease_token"]},
        )
        answered_at[a["rollout_id"]] = time.monotonic()
        assert r.status_code == 200, r.text
        return dict(r.json())

    polls = [asyncio.ensure_future(poll(a)) for a in accepted]
    await _held(service, N)
    released_at: dict[str, float] = {}
    for rid in ids[::2]:  # half of them; the others must stay held
        released_at[rid] = time.monotonic()
        backend.release(rid)
    results = await asyncio.wait_for(asyncio.gather(*polls[::2]), BOUND_SEC)
    assert [r["sample"]["completion"][0]["content"] for r in results] == ids[
        ::2
    ]  # each its own result
    assert all(r["status"] == "success" for r in results)
    assert max(answered_at[rid] - released_at[rid] for rid in ids[::2]) < BOUND_SEC
    assert not any(p.done() for p in polls[1::2])  # an unfinished rollout's poll is still held
    assert service.registry.held_polls == N // 2
    for rid in ids[1::2]:
        backend.release(rid)
    rest = await asyncio.wait_for(asyncio.gather(*polls[1::2]), BOUND_SEC)
    assert [r["sample"]["completion"][0]["content"] for r in rest] == ids[1::2]


async def test_one_batched_poll_answers_soon_after_the_first_result(held: Any) -> None:
    backend, service, http = held
    ids = [f"b{i}" for i in range(N)]
    answers = (
        await http.post("/rollouts", json={"rollouts": [held_request(rid) for rid in ids]})
    ).json()["results"]
    leases = {a["rollout_id"]: a["polling_lease_token"] for a in answers}
    poll = asyncio.ensure_future(http.post("/rollouts/results", json={"leases": leases}))
    await _held(service, 1)
    backend.release("b123")
    results = (await asyncio.wait_for(poll, BOUND_SEC)).json()["results"]
    assert [a["rollout_id"] for a in results] == ids
    assert [a["rollout_id"] for a in results if a["status"] == "success"] == ["b123"]
    assert results[123]["sample"]["completion"][0]["content"] == "b123"
