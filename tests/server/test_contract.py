"""HTTP contract of the rollout server, over a real uvicorn process on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest

from tests.server.helpers import ServerProc, script
from verifiers_lite.remote import RolloutClient
from verifiers_lite.server.protocol import LEASE_HEADER

MSGS = [{"role": "user", "content": "What is 6 * 7?"}]


def body(**kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "initial_messages": MSGS,
        "rollout_id": uuid.uuid4().hex,
        "chat_completions_url": "http://127.0.0.1:9/v1",
        "label": "42",
    }
    out.update(kw)
    return out


async def submit(http: httpx.AsyncClient, **kw: Any) -> dict[str, Any]:
    resp = await http.post("/rollout", json=body(**kw))
    assert resp.status_code == 202, resp.text
    return dict(resp.json())


async def poll(http: httpx.AsyncClient, acc: dict[str, Any], **params: Any) -> httpx.Response:
    return await http.get(
        f"/rollout/{acc['rollout_id']}/result",
        headers={LEASE_HEADER: acc["polling_lease_token"]},
        params=params,
    )


async def final(http: httpx.AsyncClient, acc: dict[str, Any]) -> dict[str, Any]:
    for _ in range(50):
        resp = await poll(http, acc)
        assert resp.status_code == 200
        data = dict(resp.json())
        if data["status"] in ("success", "failure", "cancelled"):
            return data
    raise AssertionError("no terminal result")


async def test_admission_answers_202_with_lease(http: httpx.AsyncClient) -> None:
    acc = await submit(http)
    assert acc["status"] == "queued"
    assert acc["polling_lease_token"]
    assert acc["result_wait_timeout_sec"] == 2
    assert acc["polling_lease_timeout_sec"] == 120
    data = await final(http, acc)
    assert data["status"] == "success"
    assert data["sample"]["reward"] == 1.0
    assert "trajectory_messages" not in data["sample"]
    assert "trajectory_messages" not in (await poll(http, acc)).text  # re-readable, still clean


async def test_duplicate_rollout_id_is_409_live_and_retained(http: httpx.AsyncClient) -> None:
    acc = await submit(http, metadata=script(run_sec=0.3))
    dup = await http.post("/rollout", json=body(rollout_id=acc["rollout_id"]))
    assert dup.status_code == 409
    await final(http, acc)
    again = await http.post("/rollout", json=body(rollout_id=acc["rollout_id"]))
    assert again.status_code == 409


@pytest.mark.parametrize(
    "override",
    [
        {"rollout_id": "a/b"},
        {"rollout_id": ".."},
        {"rollout_id": ""},
        {"rollout_id": "a\nb"},
        {"llm_api_key": ""},
        {"llm_api_key": "   "},
        {"agent_timeout_sec": float("inf")},
        {"grader_timeout_sec": float("nan")},
        {"agent_timeout_sec": -1},
        {"initial_messages": None},
        {"chat_completions_url": None},
        {"unknown_field": 1},
        {"extra_fields": "not an object"},
        {"extra_fields": [1, 2]},
    ],
)
async def test_invalid_admission_is_422(http: httpx.AsyncClient, override: dict[str, Any]) -> None:
    payload = body(**override)
    payload = {k: v for k, v in payload.items() if v is not None}
    resp = await http.post(
        "/rollout",
        content=json.dumps(payload),  # allows NaN and Infinity, which httpx's json= refuses
        headers={"content-type": "application/json"},
    )
    assert resp.status_code == 422, resp.text


@pytest.mark.parametrize("extra_fields", [None, {}, {"harbor": {"task": "t1"}, "n": 3}])
async def test_every_optional_field_may_be_null_as_osmosis_ai_sends_it(
    http: httpx.AsyncClient, extra_fields: dict[str, Any] | None
) -> None:
    """osmosis-ai's client posts every field of its request model, unset ones as null."""
    nulls = {
        k: None for k in ("llm_api_key", "metadata", "agent_timeout_sec", "grader_timeout_sec")
    }
    acc = await submit(http, **nulls, extra_fields=extra_fields, grade=True)
    assert (await final(http, acc))["status"] == "success"


async def test_result_errors_422_403_404(http: httpx.AsyncClient) -> None:
    a = await submit(http)
    b = await submit(http)
    no_header = await http.get(f"/rollout/{a['rollout_id']}/result")
    assert no_header.status_code == 422
    wrong = await http.get(f"/rollout/{a['rollout_id']}/result", headers={LEASE_HEADER: "nope"})
    assert wrong.status_code == 403
    foreign = await http.get(
        f"/rollout/{a['rollout_id']}/result", headers={LEASE_HEADER: b["polling_lease_token"]}
    )
    assert foreign.status_code == 403
    unknown = await http.get("/rollout/unknown-id/result", headers={LEASE_HEADER: "x"})
    assert unknown.status_code == 404
    await final(http, a)
    await final(http, b)


async def test_long_poll_returns_on_status_change(http: httpx.AsyncClient) -> None:
    acc = await submit(http, metadata=script(run_sec=0.5, grade_sec=0.5))
    seen = None
    statuses = []
    while True:
        resp = await poll(http, acc, **({"seen": seen} if seen else {}))
        data = resp.json()
        statuses.append(data["status"])
        if data["status"] == "success":
            break
        seen = data["status"]
    assert "grading" in statuses
    # Each poll woke on a change: one that ran out its wait timeout would repeat the status it saw.
    assert all(a != b for a, b in zip(statuses, statuses[1:], strict=False)), statuses
    assert len(statuses) <= 4


async def test_long_poll_times_out_with_current_status(http: httpx.AsyncClient) -> None:
    acc = await submit(http, metadata=script(run_sec=60))
    first = (await poll(http, acc, seen="queued")).json()  # returns once running
    loop = asyncio.get_running_loop()
    start = loop.time()
    second = await poll(http, acc, seen=first["status"])
    assert second.status_code == 200 and second.json()["status"] == "running"
    assert 1.8 < loop.time() - start < 10  # the shared server's 2 s result wait, not the 60 s run
    await http.post("/rollout/cancel", json={"ids": [acc["rollout_id"]]})


async def test_cancel_dispositions_and_idempotence(http: httpx.AsyncClient) -> None:
    tag = uuid.uuid4().hex[:8]
    running = [
        await submit(http, rollout_id=f"{tag}-r{i}", metadata=script(run_sec=30)) for i in range(4)
    ]
    queued = await submit(http, rollout_id=f"{tag}-q", metadata=script(run_sec=30))
    for acc in running:  # the four slots taken before the fifth is cancelled while queued
        assert (await poll(http, acc, seen="queued")).json()["status"] == "running"
    resp = await http.post("/rollout/cancel", json={"ids": [f"{tag}-q", "missing"]})
    assert resp.json()["dispositions"] == {f"{tag}-q": "cancelled_queued", "missing": "not_found"}
    again = await http.post("/rollout/cancel", json={"ids": [f"{tag}-q"]})
    assert again.json()["dispositions"] == {f"{tag}-q": "cancelled_queued"}
    one = await http.post("/rollout/cancel", json={"ids": [f"{tag}-r0"]})
    assert one.json()["dispositions"] == {f"{tag}-r0": "cancelled_running"}
    by_prefix = await http.post("/rollout/cancel", json={"prefix": f"{tag}-r"})
    assert set(by_prefix.json()["dispositions"]) >= {f"{tag}-r1", f"{tag}-r2", f"{tag}-r3"}
    assert set(by_prefix.json()["dispositions"].values()) == {"cancelled_running"}
    for acc in [queued, *running]:
        assert (await final(http, acc))["status"] == "cancelled"
    everything = await http.post("/rollout/cancel", json={"all": True})
    assert everything.status_code == 200
    for bad in [
        {},
        {"ids": ["a"], "prefix": "a"},
        {"all": False},
        {"prefix": ""},
        {"all": True, "ids": []},
        {"ids": ["a"], "everything": True},
    ]:
        assert (await http.post("/rollout/cancel", json=bad)).status_code == 422, bad
    # osmosis-ai's client sends every field: all=false and prefix=null beside the ids.
    spelled_out = await http.post(
        "/rollout/cancel", json={"ids": ["missing"], "prefix": None, "all": False}
    )
    assert spelled_out.json()["dispositions"] == {"missing": "not_found"}


async def test_health_fields(http: httpx.AsyncClient, server: ServerProc) -> None:
    data = (await http.get("/health")).json()
    assert data["backend"] == "scripted"
    assert data["instance_id"] and data["process_id"]
    assert data["lifecycle"]["accepting_rollouts"] is True
    assert isinstance(data["lifecycle"]["active_rollouts"], int)


async def test_client_roundtrip_and_handle_stages(server: ServerProc) -> None:
    async with RolloutClient(server.url) as client:
        handle = await client.run_rollout_async(
            initial_messages=MSGS,
            chat_completions_url="http://127.0.0.1:9/v1",
            rollout_id=uuid.uuid4().hex,
            label="42",
            metadata=script(run_sec=0.3, grade_sec=0.3),
        )
        assert handle.latest_result is None
        assert not handle.done()
        assert (await handle.wait_for_running()).rank >= 1
        assert (await handle.wait_for_grading()).value in ("grading", "success")
        result = await handle
        assert result.status == "success" and result.sample is not None
        assert result.sample.reward == 1.0
        assert handle.done() and handle.latest_result == result
        assert (await handle.wait_for_completion()) == result
