"""RolloutClient retry schedules and lease bound, through a fault-injecting proxy.

The proxy tests run over both transports: the default aiohttp one and a user's httpx client.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from tests.server.helpers import ServerProc, script
from tests.server.proxy import FaultProxy
from verifiers_lite.clients.retry import ADMISSION_RETRY_AFTER
from verifiers_lite.remote import (
    RolloutAdmissionTimeoutError,
    RolloutClient,
    RolloutProtocolError,
)
from verifiers_lite.server.protocol import LEASE_HEADER
from verifiers_lite.testing.clock import ManualClock

MSGS = [{"role": "user", "content": "6*7?"}]
URL = "http://127.0.0.1:9/v1"


@pytest.fixture
async def proxy(server: ServerProc) -> AsyncIterator[FaultProxy]:
    port = int(server.url.rsplit(":", 1)[1])
    p = await FaultProxy(port).start()
    yield p
    await p.close()


@contextlib.asynccontextmanager
async def _client(kind: str, url: str, **kw: Any) -> AsyncIterator[RolloutClient]:
    if kind == "httpx":
        # follow_redirects=True on the user's client: RolloutClient must still not follow.
        async with (
            httpx.AsyncClient(follow_redirects=True) as http,
            RolloutClient(url, http_client=http, **kw) as client,
        ):
            yield client
    else:
        async with RolloutClient(url, **kw) as client:
            yield client


Connect = Callable[..., contextlib.AbstractAsyncContextManager[RolloutClient]]


@pytest.fixture(params=["aiohttp", "httpx"])
def connect(request: pytest.FixtureRequest) -> Connect:
    """Open a RolloutClient over the default (aiohttp) transport or a user's httpx client."""
    return functools.partial(_client, request.param)


async def run(client: RolloutClient, **kw: Any) -> Any:
    return await client.run_rollout(
        initial_messages=MSGS,
        chat_completions_url=URL,
        rollout_id=uuid.uuid4().hex,
        label="42",
        **kw,
    )


async def test_gateway_errors_retry_on_schedule_then_succeed(
    proxy: FaultProxy, fake_clock: ManualClock, connect: Connect
) -> None:
    proxy.faults.extend(["502", "503", "504", "503", "502"])
    async with connect(proxy.url, clock=fake_clock) as client:
        result = await run(client)
    assert result.status == "success"
    assert fake_clock.sleeps == [0.25, 0.5, 1.0, 2.0, 4.0]


async def test_gateway_errors_exhaust_six_retries(
    proxy: FaultProxy, fake_clock: ManualClock, connect: Connect
) -> None:
    proxy.always = "503"
    async with connect(proxy.url, clock=fake_clock) as client:
        with pytest.raises(RolloutProtocolError) as info:
            await run(client)
    assert info.value.status_code == 503
    assert fake_clock.sleeps == [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    assert sum(s.startswith("503") for s in proxy.seen) == 7


async def test_network_errors_retry_twice(
    proxy: FaultProxy, fake_clock: ManualClock, connect: Connect
) -> None:
    proxy.always = "drop"
    async with connect(proxy.url, clock=fake_clock) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            await run(client)
    assert fake_clock.sleeps == [0.1, 0.5]


async def test_read_timeouts_retry_twice(
    spawn: Any, fake_clock: ManualClock, connect: Connect
) -> None:
    srv = spawn(wait=0.2, lease=30)
    proxy = await FaultProxy(int(srv.url.rsplit(":", 1)[1])).start()
    proxy.always = "hang"
    try:
        # One full request = 0.2 s long poll + 0.2 s grace, then the read times out (real time).
        async with connect(proxy.url, clock=fake_clock, request_grace_sec=0.2) as client:
            with pytest.raises(httpx.ReadTimeout):
                await run(client)
        assert fake_clock.sleeps == [0.1, 0.5]
        assert sum(s.startswith("hang") for s in proxy.seen) == 3
    finally:
        await proxy.close()


async def test_network_then_gateway_schedules_are_independent(
    proxy: FaultProxy, fake_clock: ManualClock, connect: Connect
) -> None:
    proxy.faults.extend(["drop", "502", "drop", "504"])
    async with connect(proxy.url, clock=fake_clock) as client:
        result = await run(client)
    assert result.status == "success"
    assert fake_clock.sleeps == [0.1, 0.25, 0.5, 0.5]


async def test_schedules_reset_after_a_successful_poll(
    proxy: FaultProxy, fake_clock: ManualClock, connect: Connect
) -> None:
    proxy.faults.extend(["drop", "drop", "pass", "drop", "drop"])
    async with connect(proxy.url, clock=fake_clock) as client:
        # A handle observes every stage (run_rollout polls once, for the terminal result only):
        # the first successful poll wakes at grading; the next ones see the drops afresh.
        handle = await client.run_rollout_async(
            initial_messages=MSGS,
            chat_completions_url=URL,
            rollout_id=uuid.uuid4().hex,
            label="42",
            metadata=script(run_sec=0.3, grade_sec=0.3),
        )
        result = await handle
    assert result.status == "success"
    assert fake_clock.sleeps == [0.1, 0.5, 0.1, 0.5]


async def test_retry_only_if_it_fits_before_the_lease_deadline(
    spawn: Any, fake_clock: ManualClock, connect: Connect
) -> None:
    srv = spawn(wait=1, lease=3)
    proxy = await FaultProxy(int(srv.url.rsplit(":", 1)[1])).start()
    proxy.always = "503"
    try:
        # One full request = 1 s long poll + 0.5 s grace: after 0.25 + 0.5 s of backoff the
        # 1 s backoff would end past the 3 s lease, so the client stops there.
        async with connect(proxy.url, clock=fake_clock, request_grace_sec=0.5) as client:
            with pytest.raises(RolloutProtocolError) as info:
                await run(client)
        assert info.value.status_code == 503
        assert fake_clock.sleeps == [0.25, 0.5]
    finally:
        await proxy.close()


async def test_other_statuses_fail_at_once(
    proxy: FaultProxy, fake_clock: ManualClock, connect: Connect
) -> None:
    proxy.faults.append("redirect")  # never followed, so the key never goes elsewhere
    async with connect(proxy.url, clock=fake_clock, api_key="k") as client:
        with pytest.raises(RolloutProtocolError) as info:
            await run(client)
    assert info.value.status_code == 307
    assert fake_clock.sleeps == []


async def test_admission_retries_429_with_clamped_retry_after(
    spawn: Any, fake_clock: ManualClock
) -> None:
    srv = spawn(max_admitted=1, max_concurrent=1, retry_after=0.001)
    async with RolloutClient(srv.url, clock=fake_clock) as client:
        first = await client.run_rollout_async(
            initial_messages=MSGS,
            chat_completions_url=URL,
            rollout_id="blocker",
            metadata=script(run_sec=1.0),
            grade=False,
        )
        real = RolloutClient(srv.url)  # real clock: the blocker must actually finish
        second = await real.run_rollout(
            initial_messages=MSGS, chat_completions_url=URL, rollout_id="second", grade=False
        )
        assert second.status == "success"
        await first
        await real.aclose()
    assert ADMISSION_RETRY_AFTER.seconds("0.001") == 0.05


async def test_admission_timeout_bounds_429_waits(spawn: Any, fake_clock: ManualClock) -> None:
    srv = spawn(max_admitted=1, max_concurrent=1, retry_after=2)
    async with RolloutClient(srv.url, clock=fake_clock, admission_timeout_sec=5) as client:
        h = await client.run_rollout_async(
            initial_messages=MSGS,
            chat_completions_url=URL,
            rollout_id="b1",
            metadata=script(run_sec=30),
            grade=False,
        )
        with pytest.raises(RolloutAdmissionTimeoutError) as info:
            await client.run_rollout_async(
                initial_messages=MSGS, chat_completions_url=URL, rollout_id="b2"
            )
        assert isinstance(info.value, TimeoutError)
        assert info.value.may_have_been_admitted is False
        assert fake_clock.sleeps == [2.0, 2.0]
        await client.cancel_rollout("b1")
        assert (await h).status == "cancelled"


async def test_admission_deadline_during_request_says_maybe_admitted(
    server: ServerProc, connect: Connect
) -> None:
    port = int(server.url.rsplit(":", 1)[1])
    proxy = await FaultProxy(port, match="/rollout").start()
    proxy.always = "hang"
    try:
        async with connect(proxy.url, admission_timeout_sec=0.3) as client:
            with pytest.raises(RolloutAdmissionTimeoutError, match="may have admitted") as info:
                await client.run_rollout_async(
                    initial_messages=MSGS, chat_completions_url=URL, rollout_id="x"
                )
        assert info.value.may_have_been_admitted is True
    finally:
        await proxy.close()


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, 1.0),
        ("0", 0.05),
        ("0.5", 0.5),
        ("3600", 60.0),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 1.0),
        ("nan", 1.0),
    ],
)
def test_retry_after_clamp(header: str | None, expected: float) -> None:
    assert ADMISSION_RETRY_AFTER.seconds(header) == expected


async def test_cancel_rollout_is_bounded(
    server: ServerProc, monkeypatch: pytest.MonkeyPatch, connect: Connect
) -> None:
    import verifiers_lite.remote.client as client_mod

    monkeypatch.setattr(client_mod, "CANCEL_TIMEOUT_SEC", 0.3)
    proxy = await FaultProxy(int(server.url.rsplit(":", 1)[1]), match="/cancel").start()
    proxy.always = "hang"
    try:
        async with connect(proxy.url) as client:
            start = asyncio.get_running_loop().time()
            with pytest.raises(TimeoutError):
                await client.cancel_rollout("anything")
            assert (
                asyncio.get_running_loop().time() - start < 4.5
            )  # the 0.3 s bound, not the default 5 s
    finally:
        await proxy.close()


def test_cancel_bound_is_five_seconds() -> None:
    from verifiers_lite.clients.retry import RESULT_POLL_GATEWAY, RESULT_POLL_NETWORK
    from verifiers_lite.remote.statuses import CANCEL_TIMEOUT_SEC

    assert CANCEL_TIMEOUT_SEC == 5.0
    assert RESULT_POLL_NETWORK.delays == (0.1, 0.5)
    assert RESULT_POLL_GATEWAY.delays == (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


async def test_handle_cancel_stops_local_polling_only(server: ServerProc) -> None:
    async with RolloutClient(server.url) as client:
        h = await client.run_rollout_async(
            initial_messages=MSGS,
            chat_completions_url=URL,
            rollout_id=uuid.uuid4().hex,
            metadata=script(run_sec=0.5),
            grade=False,
        )
        h.cancel()
        with pytest.raises(asyncio.CancelledError):
            await h
        # The server kept running it: once it is idle, a fresh poll sees the finished result.
        await client.wait_idle(timeout_sec=10, poll_interval_sec=0.1)
    async with httpx.AsyncClient(base_url=server.url) as http:
        poll = await http.get(
            f"/rollout/{h.rollout_id}/result",
            headers={LEASE_HEADER: h.accepted.polling_lease_token},
        )
    assert poll.status_code == 200 and poll.json()["status"] == "success", poll.text
    assert (
        poll.json()["sample"]["completion"][-1]["content"] == "42"
    )  # 6*7, answered after the cancel
