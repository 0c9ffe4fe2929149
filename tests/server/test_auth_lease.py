"""Auth on every route, lease expiry, result retention, health and wait_idle."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest

from tests.server.helpers import script
from verifiers_lite.remote import RolloutClient, RolloutProtocolError
from verifiers_lite.server import create_rollout_server
from verifiers_lite.server.protocol import LEASE_HEADER
from verifiers_lite.testing.waiting import wait_until_async

MSGS = [{"role": "user", "content": "6*7?"}]
URL = "http://127.0.0.1:9/v1"


async def test_bearer_auth_on_every_route(spawn: Any) -> None:
    srv = spawn(api_key="s3cret", wait=1)
    routes = [
        ("GET", "/health", None),
        ("POST", "/rollout", {"bad": "body"}),
        (
            "POST",
            "/rollout",
            {"initial_messages": MSGS, "rollout_id": "a", "chat_completions_url": URL},
        ),
        ("GET", "/rollout/a/result", None),
        ("POST", "/rollout/cancel", {"all": True}),
        (
            "POST",
            "/rollouts",
            {
                "rollouts": [
                    {"initial_messages": MSGS, "rollout_id": "b", "chat_completions_url": URL}
                ]
            },
        ),
        ("POST", "/rollouts/results", {"leases": {"a": "token"}}),
        ("GET", "/no/such/path", None),
        ("DELETE", "/health", None),
    ]
    async with httpx.AsyncClient(base_url=srv.url) as http:
        for headers in (
            {},
            {"Authorization": "Bearer wrong"},
            {"Authorization": "s3cret"},
            {"Authorization": "Bearer s3cret2"},
            {"Authorization": "bearer  s3cret"},
        ):
            for method, path, body in routes:
                resp = await http.request(method, path, json=body, headers=headers)
                assert resp.status_code == 401, (method, path, headers)
        ok = await http.get("/health", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        missing = await http.get("/no/such/path", headers={"Authorization": "Bearer s3cret"})
        assert missing.status_code == 404
    async with RolloutClient(srv.url, api_key="s3cret") as client:
        result = await client.run_rollout(
            initial_messages=MSGS, chat_completions_url=URL, rollout_id="a", label="42"
        )
        assert result.status == "success"
        assert await client.cancel_rollout("a") == "not_found"
    async with RolloutClient(srv.url) as client:
        with pytest.raises(RolloutProtocolError) as info:
            await client.health()
        assert info.value.status_code == 401


@pytest.mark.parametrize("key", ["", "   ", "\t"])
def test_blank_api_keys_are_refused_on_both_sides(key: str) -> None:
    from tests.server.scripted_server import ScriptedBackend

    with pytest.raises(ValueError):
        RolloutClient("http://127.0.0.1:1", api_key=key)
    with pytest.raises(ValueError):
        create_rollout_server(ScriptedBackend(), api_key=key)


def test_server_defaults_and_bad_settings() -> None:
    import inspect

    from tests.server.scripted_server import ScriptedBackend
    from verifiers_lite.server.lifecycle import ShutdownTimeouts

    params = inspect.signature(create_rollout_server).parameters
    assert params["result_wait_timeout_sec"].default == 30
    assert params["polling_lease_timeout_sec"].default == 120
    assert params["result_retention_sec"].default == 900
    assert ShutdownTimeouts() == ShutdownTimeouts(10, 120, 10)
    for bad in (
        {"result_wait_timeout_sec": float("inf")},
        {"polling_lease_timeout_sec": 0},
        {"result_retention_sec": float("nan")},
    ):
        with pytest.raises(ValueError):
            create_rollout_server(ScriptedBackend(), **bad)
    with pytest.raises(ValueError):
        RolloutClient("http://x", admission_timeout_sec=float("inf"))


async def test_lease_expiry_fails_and_requests_cancellation(spawn: Any) -> None:
    srv = spawn(wait=0.3, lease=1.0)
    async with httpx.AsyncClient(base_url=srv.url) as http:
        resp = await http.post(
            "/rollout",
            json={
                "initial_messages": MSGS,
                "rollout_id": "idle",
                "chat_completions_url": URL,
                "metadata": script(run_sec=30, cleanup_sec=5.0),
            },
        )
        token = resp.json()["polling_lease_token"]
        await asyncio.sleep(1.6)  # no poll: the lease runs out (time passing is the scenario)
        data = (await http.get("/rollout/idle/result", headers={LEASE_HEADER: token})).json()
        assert data["status"] == "failure"
        assert data["err_category"] == "lease_expired"
        # Visible before the 5 s cleanup ends; the rollout stays active until it does.
        assert (await http.get("/health")).json()["lifecycle"]["active_rollouts"] == 1

        async def inactive() -> bool:
            return (await http.get("/health")).json()["lifecycle"]["active_rollouts"] == 0

        await wait_until_async(inactive, "the rollout ends after its cleanup")
    assert [e["event"] for e in srv.events() if e.get("id") == "idle"] == ["start", "cancel", "end"]


async def test_polling_keeps_the_lease_alive(spawn: Any) -> None:
    srv = spawn(wait=0.3, lease=1.0)
    async with RolloutClient(srv.url) as client:
        result = await client.run_rollout(
            initial_messages=MSGS,
            chat_completions_url=URL,
            rollout_id="kept",
            metadata=script(run_sec=2.5),
            grade=False,
        )
    assert result.status == "success"


async def test_results_are_purged_after_retention(spawn: Any) -> None:
    srv = spawn(wait=0.5, lease=2, retention=0.5)
    async with RolloutClient(srv.url) as client, httpx.AsyncClient(base_url=srv.url) as http:
        first = await client.run_rollout(
            initial_messages=MSGS, chat_completions_url=URL, rollout_id="r", grade=False
        )
        assert first.status == "success"

        async def purged() -> bool:  # a wrong lease is 403 while the result is kept, 404 after
            resp = await http.get("/rollout/r/result", headers={LEASE_HEADER: "wrong"})
            return resp.status_code == 404

        await wait_until_async(purged, "the result purged after its 0.5 s retention")
        again = await client.run_rollout(  # id free again: no 409
            initial_messages=MSGS, chat_completions_url=URL, rollout_id="r", grade=False
        )
        assert again.status == "success"


async def test_failures_carry_categories(server: Any) -> None:
    async with RolloutClient(server.url) as client:

        async def go(**kw: Any) -> Any:
            return await client.run_rollout(
                initial_messages=MSGS, chat_completions_url=URL, rollout_id=uuid.uuid4().hex, **kw
            )

        agent = await go(metadata=script(fail="agent_error"))
        assert (agent.status, agent.err_category) == ("failure", "agent_error")
        crash = await go(metadata=script(fail="crash"))
        assert (crash.status, crash.err_category) == ("failure", "internal_error")
        assert "scripted crash" in (crash.err_message or "")
        slow = await go(metadata=script(run_sec=5), agent_timeout_sec=0.2)
        assert (slow.status, slow.err_category) == ("failure", "timeout")


async def test_wait_idle_and_process_id(spawn: Any) -> None:
    a, b = spawn(wait=1), spawn(wait=1)
    async with RolloutClient(a.url) as ca, RolloutClient(b.url) as cb:
        ha, hb = await ca.health(), await cb.health()
        assert ha["process_id"] != hb["process_id"]
        h = await ca.run_rollout_async(
            initial_messages=MSGS,
            chat_completions_url=URL,
            rollout_id="w",
            metadata=script(run_sec=0.6),
            grade=False,
        )
        assert (await ca.health())["lifecycle"]["active_rollouts"] == 1
        idle = await ca.wait_idle(
            timeout_sec=10, poll_interval_sec=0.1, process_id=ha["process_id"]
        )
        assert idle["lifecycle"]["active_rollouts"] == 0
        await h
        with pytest.raises(RolloutProtocolError):
            await ca.wait_idle(timeout_sec=5, process_id=hb["process_id"])
        await ca.run_rollout_async(
            initial_messages=MSGS,
            chat_completions_url=URL,
            rollout_id="w2",
            metadata=script(run_sec=5),
            grade=False,
        )
        with pytest.raises(TimeoutError):
            await ca.wait_idle(timeout_sec=0.4, poll_interval_sec=0.1)
        for bad in (float("inf"), 0, -1):
            with pytest.raises(ValueError):
                await ca.wait_idle(timeout_sec=bad)
            with pytest.raises(ValueError):
                await ca.wait_idle(poll_interval_sec=bad)
        await ca.cancel_rollout("w2")


def test_lease_tokens_are_distinct_url_safe_and_192_random_bits() -> None:
    import base64

    from verifiers_lite.server.rollout_table import RolloutRegistry

    registry = RolloutRegistry(polling_lease_timeout_sec=60, result_retention_sec=60)
    # More than one draw from the OS (tokens come a thousand at a time).
    tokens = [registry.add(f"r{i}").lease_token for i in range(2500)]
    assert len(set(tokens)) == len(tokens)
    raw = [base64.urlsafe_b64decode(t) for t in tokens]
    assert all(
        len(t) == 32 and t.isascii() and "=" not in t and "/" not in t and "+" not in t
        for t in tokens
    )
    assert {len(b) for b in raw} == {24}
    assert len({b[:8] for b in raw}) == len(
        raw
    )  # no two share even a prefix: no overlapping slices
    # Uniform bytes: each bit set about half the time over 60,000 bytes (tolerance ~10 sigma).
    ones = sum(bin(byte).count("1") for b in raw for byte in b)
    bits = 8 * 24 * len(raw)
    assert abs(ones / bits - 0.5) < 10 * 0.5 / bits**0.5
