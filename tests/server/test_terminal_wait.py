"""``wait=terminal`` result polls: one answer per rollout, lease still renewed, default unchanged."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest

from tests.server.helpers import ServerProc, script
from tests.server.proxy import FaultProxy
from verifiers_lite.remote import RolloutClient
from verifiers_lite.server.protocol import LEASE_HEADER

MSGS = [{"role": "user", "content": "6*7?"}]
URL = "http://127.0.0.1:9/v1"


def body(**kw: Any) -> dict[str, Any]:
    return {
        "initial_messages": MSGS,
        "rollout_id": uuid.uuid4().hex,
        "chat_completions_url": URL,
        "label": "42",
        **kw,
    }


async def get(http: httpx.AsyncClient, acc: dict[str, Any], **params: Any) -> httpx.Response:
    return await http.get(
        f"/rollout/{acc['rollout_id']}/result",
        headers={LEASE_HEADER: acc["polling_lease_token"]},
        params=params,
    )


async def test_terminal_wait_skips_intermediate_stages(http: httpx.AsyncClient) -> None:
    acc = (
        await http.post("/rollout", json=body(metadata=script(run_sec=0.3, grade_sec=0.3)))
    ).json()
    resp = await get(http, acc, wait="terminal")
    assert resp.status_code == 200
    data = resp.json()
    assert data["status"] == "success" and data["sample"]["reward"] == 1.0
    assert set(data) == {"rollout_id", "status", "sample", "err_message", "err_category"}
    # Re-readable, in both modes, with the same body.
    assert (await get(http, acc, wait="terminal")).json() == data == (await get(http, acc)).json()


async def test_terminal_wait_returns_by_the_wait_timeout(http: httpx.AsyncClient) -> None:
    acc = (await http.post("/rollout", json=body(metadata=script(run_sec=60)))).json()
    loop = asyncio.get_running_loop()
    start = loop.time()
    data = (await get(http, acc, wait="terminal")).json()
    assert data["status"] == "running" and data["sample"] is None
    assert 1.8 < loop.time() - start < 10  # the shared server's 2 s result wait, not the 60 s run
    await http.post("/rollout/cancel", json={"ids": [acc["rollout_id"]]})


@pytest.mark.parametrize("params", [{"wait": "forever"}, {"seen": "bogus"}])
async def test_bad_poll_parameters_are_422(http: httpx.AsyncClient, params: dict[str, str]) -> None:
    acc = (await http.post("/rollout", json=body())).json()
    assert (await get(http, acc, **params)).status_code == 422
    assert (await get(http, acc, wait="terminal")).json()["status"] == "success"


async def test_terminal_polls_renew_the_lease(spawn: Any) -> None:
    # Each poll waits 1 s and the lease is 2 s: a 4 s rollout survives only if polls renew it.
    srv = spawn(wait=1, lease=2)
    async with RolloutClient(srv.url) as client:
        result = await client.run_rollout(
            initial_messages=MSGS,
            chat_completions_url=URL,
            rollout_id=uuid.uuid4().hex,
            label="42",
            metadata=script(run_sec=4),
        )
    assert result.status == "success", result


async def test_run_rollout_polls_once_per_rollout(server: ServerProc) -> None:
    proxy = await FaultProxy(int(server.url.rsplit(":", 1)[1])).start()
    try:
        async with RolloutClient(proxy.url) as client:
            results = await asyncio.gather(
                *(
                    client.run_rollout(
                        initial_messages=MSGS,
                        chat_completions_url=URL,
                        rollout_id=uuid.uuid4().hex,
                        label="42",
                        metadata=script(run_sec=0.2, grade_sec=0.2),
                    )
                    for _ in range(4)
                )
            )
        assert [r.status for r in results] == ["success"] * 4
        polls = [s for s in proxy.seen if "/result" in s]
        assert len(polls) == 4 and all("wait=terminal" in s for s in polls)
    finally:
        await proxy.close()
