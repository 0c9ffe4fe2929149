"""Client and server paths around admission and health, over real uvicorn processes: 429 hints,
409, 401, a 503 -> 200 health transition, a 202 for another rollout, and instance/process ids."""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx
import pytest

from tests.server.helpers import ServerProc, script
from tests.server.proxy import FaultProxy
from verifiers_lite.remote import RolloutClient, RolloutProtocolError
from verifiers_lite.server import create_rollout_server
from verifiers_lite.server.app import INSTANCE_ID_ENV, resolve_instance_id
from verifiers_lite.testing.clock import ManualClock

MSGS = [{"role": "user", "content": "6*7?"}]
URL = "http://127.0.0.1:9/v1"


def body(rid: str, **kw: Any) -> dict[str, Any]:
    return {
        "initial_messages": MSGS,
        "rollout_id": rid,
        "chat_completions_url": URL,
        "grade": False,
        **kw,
    }


async def test_429_retry_after_is_whole_seconds_with_the_exact_hint_in_the_body(
    spawn: Any, fake_clock: ManualClock
) -> None:
    srv = spawn(max_admitted=1, max_concurrent=1, retry_after=0.25)
    async with httpx.AsyncClient(base_url=srv.url) as http:
        assert (
            await http.post("/rollout", json=body("held", metadata=script(run_sec=30)))
        ).status_code == 202
        full = await http.post("/rollout", json=body("refused"))
        assert full.status_code == 429
        assert re.fullmatch(r"[1-9][0-9]*", full.headers["retry-after"])  # HTTP: delta-seconds
        assert full.headers["retry-after"] == "1"  # 0.25 s rounded up
        assert full.json() == {"detail": "backend is full", "retry_after_sec": 0.25}
        urllib3 = pytest.importorskip("urllib3")
        assert urllib3.util.Retry().parse_retry_after(full.headers["retry-after"]) == 1
    # The client waits the body's 0.25 s, not the header's whole second.
    async with RolloutClient(srv.url, clock=fake_clock, admission_timeout_sec=1) as client:
        with pytest.raises(TimeoutError):
            await client.run_rollout(
                initial_messages=MSGS, chat_completions_url=URL, rollout_id="again"
            )
        await client.cancel_rollout("held")
    assert fake_clock.sleeps == [0.25, 0.25, 0.25]


async def test_duplicate_id_is_409_at_once(server: ServerProc, fake_clock: ManualClock) -> None:
    rid = uuid.uuid4().hex
    async with RolloutClient(server.url, clock=fake_clock) as client:
        live = await client.run_rollout_async(
            initial_messages=MSGS,
            chat_completions_url=URL,
            rollout_id=rid,
            metadata=script(run_sec=30),
            grade=False,
        )
        with pytest.raises(RolloutProtocolError, match="409") as info:
            await client.run_rollout(
                initial_messages=MSGS, chat_completions_url=URL, rollout_id=rid
            )
        assert info.value.status_code == 409
        assert fake_clock.sleeps == []  # never retried
        await client.cancel_rollout(rid)
        assert (await live).status == "cancelled"


async def test_client_401_paths_fail_at_once(spawn: Any, fake_clock: ManualClock) -> None:
    srv = spawn(api_key="s3cret", wait=1)
    for key in (None, "wrong"):
        async with RolloutClient(srv.url, api_key=key, clock=fake_clock) as client:
            for call in (
                client.run_rollout(initial_messages=MSGS, chat_completions_url=URL, rollout_id="a"),
                client.run_rollout_async(
                    initial_messages=MSGS, chat_completions_url=URL, rollout_id="b"
                ),
                client.cancel_rollout("a"),
                client.health(),
                client.wait_idle(timeout_sec=30),
            ):
                with pytest.raises(RolloutProtocolError) as info:
                    await call
                assert info.value.status_code == 401
    assert fake_clock.sleeps == []
    async with RolloutClient(srv.url, api_key="s3cret") as client:
        assert (await client.health())["lifecycle"]["active_rollouts"] == 0  # nothing was admitted


async def test_wait_idle_rides_out_503_until_200(
    server: ServerProc, fake_clock: ManualClock
) -> None:
    port = int(server.url.rsplit(":", 1)[1])
    proxy = await FaultProxy(port, match="/health").start()
    proxy.faults.extend(["503", "503", "502"])
    try:
        async with RolloutClient(proxy.url, clock=fake_clock) as client:
            payload = await client.wait_idle(timeout_sec=30, poll_interval_sec=2)
    finally:
        await proxy.close()
    assert payload["lifecycle"]["active_rollouts"] == 0
    assert [s.split()[0] for s in proxy.seen] == ["503", "503", "502", "pass"]
    assert fake_clock.sleeps == [2.0, 2.0, 2.0]


async def test_a_202_for_another_rollout_is_a_protocol_error() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        if request.method == "POST":
            return httpx.Response(
                202,
                json={
                    "rollout_id": "someone-else",
                    "status": "queued",
                    "polling_lease_token": "t",
                    "result_wait_timeout_sec": 1,
                    "polling_lease_timeout_sec": 5,
                },
            )
        return httpx.Response(200, json={"rollout_id": "someone-else", "status": "success"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
        client = RolloutClient("http://127.0.0.1:1", http_client=http)
        with pytest.raises(RolloutProtocolError, match="someone-else"):
            await client.run_rollout(
                initial_messages=MSGS, chat_completions_url=URL, rollout_id="mine"
            )
        with pytest.raises(RolloutProtocolError):
            await client.run_rollout_async(
                initial_messages=MSGS, chat_completions_url=URL, rollout_id="mine"
            )
    assert seen == ["POST /rollout", "POST /rollout"]  # never polled the other rollout


async def test_instance_id_from_the_launcher_else_the_process_id(spawn: Any) -> None:
    named = spawn(env={INSTANCE_ID_ENV: "launcher-7"})
    plain, other = spawn(), spawn()
    async with httpx.AsyncClient() as http:
        a = (await http.get(named.url + "/health")).json()
        b = (await http.get(plain.url + "/health")).json()
        c = (await http.get(other.url + "/health")).json()
    assert a["instance_id"] == "launcher-7" and a["process_id"] != "launcher-7"
    assert str(named.proc.pid) == a["process_id"].split("-")[0]
    assert b["instance_id"] == b["process_id"] and b["process_id"].split("-")[0] == str(
        plain.proc.pid
    )
    assert len({a["process_id"], b["process_id"], c["process_id"]}) == 3


@pytest.mark.parametrize("bad", ["", "   ", "x" * 257, "tab\there"])
def test_bad_instance_ids_are_refused(bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.server.scripted_server import ScriptedBackend

    with pytest.raises(ValueError, match="instance_id"):
        create_rollout_server(ScriptedBackend(), instance_id=bad)
    monkeypatch.setenv(INSTANCE_ID_ENV, bad)
    with pytest.raises(ValueError, match=INSTANCE_ID_ENV):
        create_rollout_server(ScriptedBackend())
    monkeypatch.setenv(INSTANCE_ID_ENV, "ok-1")
    assert resolve_instance_id(None) == "ok-1"
    assert resolve_instance_id("given") == "given"  # an explicit id wins over the environment
