"""Results streamed on the batched admission (``POST /rollouts`` with ``Accept:
application/x-ndjson``): the batch's answer, then one line per admitted rollout as it ends (in
the order the test ends them), the status so far once the result wait runs out, nothing held
once the client leaves; and the client reads its results off that stream, polling only what
the stream does not bring. Real uvicorn on 127.0.0.1, rollouts that end when the test says."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from tests.server.helpers import HeldBackend, held_request, serve_in_process
from tests.server.proxy import CutAfterFirstLine
from verifiers_lite.remote import RolloutClient
from verifiers_lite.server.protocol import LEASE_HEADER
from verifiers_lite.testing.waiting import wait_until_async

WAIT_SEC = 600.0  # no line can come from the wait running out within these tests
NDJSON = {"Accept": "application/x-ndjson"}


@pytest.fixture
async def held() -> AsyncIterator[tuple[HeldBackend, Any, str]]:
    backend = HeldBackend()
    async with serve_in_process(
        backend, result_wait_timeout_sec=WAIT_SEC, polling_lease_timeout_sec=2 * WAIT_SEC
    ) as (service, url):
        yield backend, service, url


async def _line(resp: aiohttp.ClientResponse) -> Any:
    line = await asyncio.wait_for(resp.content.readline(), 60)
    return json.loads(line) if line else None


async def _polled(http: aiohttp.ClientSession, url: str, accepted: dict[str, Any]) -> Any:
    async with http.get(
        f"{url}/rollout/{accepted['rollout_id']}/result",
        params={"wait": "terminal"},
        headers={LEASE_HEADER: accepted["polling_lease_token"]},
    ) as r:
        assert r.status == 200
        return await r.json()


async def test_each_admitted_rollout_gets_its_line_as_it_ends(held: Any) -> None:
    backend, service, url = held
    batch = {
        "rollouts": [held_request("a"), held_request("b"), held_request("c"), held_request("a")]
    }  # the second "a": a 409
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{url}/rollouts", json=batch, headers=NDJSON) as resp:
            assert resp.status == 200 and resp.headers["content-type"] == "application/x-ndjson"
            first = await _line(resp)
            assert [r["status_code"] for r in first["results"]] == [202, 202, 202, 409]
            assert [r["rollout_id"] for r in first["results"][:3]] == ["a", "b", "c"]
            await wait_until_async(
                lambda: service.registry.held_polls == 1, "the stream is held", 60
            )
            backend.release("c")
            third_done = await _line(resp)
            backend.release("a")
            backend.release("b")
            rest = [await _line(resp), await _line(resp)]
            assert await resp.content.read() == b""  # every admitted rollout had its line: the end
        assert third_done["rollout_id"] == "c" and third_done["status"] == "success"
        assert third_done["sample"]["completion"][0]["content"] == "c"  # its own result
        assert sorted(r["rollout_id"] for r in rest) == ["a", "b"]
        accepted = {r["rollout_id"]: r for r in first["results"][:3]}
        for line in [third_done, *rest]:  # each line is what a poll answers
            assert line == await _polled(http, url, accepted[line["rollout_id"]])
    assert service.registry.held_polls == 0


async def test_the_stream_ends_with_the_status_so_far_when_the_wait_runs_out() -> None:
    backend = HeldBackend()
    async with (
        serve_in_process(backend, result_wait_timeout_sec=1.0) as (_, url),
        aiohttp.ClientSession() as http,
    ):
        async with http.post(
            f"{url}/rollouts",
            json={"rollouts": [held_request("x"), held_request("y")]},
            headers=NDJSON,
        ) as resp:
            first = await _line(resp)
            backend.release("x")
            done, left = await _line(resp), await _line(resp)
            assert await resp.content.read() == b""
        assert done["rollout_id"] == "x" and done["status"] == "success"
        assert left["rollout_id"] == "y" and left["status"] == "running" and left["sample"] is None
        backend.release("y")  # the lease held: it is polled as usual
        polled = await _polled(http, url, first["results"][1])
    assert polled["status"] == "success" and polled["sample"]["completion"][0]["content"] == "y"


async def test_a_client_that_leaves_holds_nothing(held: Any) -> None:
    _, service, url = held
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            f"{url}/rollouts", json={"rollouts": [held_request("gone")]}, headers=NDJSON
        ) as resp,
    ):
        await _line(resp)
        await wait_until_async(lambda: service.registry.held_polls == 1, "the stream is held", 60)
        resp.close()  # drops the connection mid-stream
    # Released long before the ten-minute wait: the server saw the client leave.
    await wait_until_async(lambda: service.registry.held_polls == 0, "the stream let go", 60)


async def test_plain_json_clients_get_the_batch_answer_alone(held: Any) -> None:
    _, service, url = held
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{url}/rollouts", json={"rollouts": [held_request("p")]}) as resp,
    ):
        assert resp.headers["content-type"] == "application/json"
        assert [r["status_code"] for r in (await resp.json())["results"]] == [202]
    assert service.registry.held_polls == 0


def _state_input(i: int) -> dict[str, Any]:
    return {
        "prompt": [{"role": "user", "content": f"{i}+1?"}],
        "answer": str(i + 1),
        "example_id": i,
        "task": "t",
        "info": {},
    }


async def test_run_state_reads_results_off_the_admission_and_polls_what_a_cut_stream_lost(
    held: Any,
) -> None:
    backend, _, url = held
    proxy = await CutAfterFirstLine(int(url.rsplit(":", 1)[1]), refuse_batched=False).start()
    try:
        async with RolloutClient(f"http://127.0.0.1:{proxy.port}") as client:
            runs = [
                asyncio.ensure_future(
                    client.run_state(
                        _state_input(i),
                        chat_completions_url="http://127.0.0.1:9/v1",
                        llm_api_key=None,
                        model="m",
                        sampling_args=None,
                    )
                )
                for i in range(3)
            ]
            await wait_until_async(lambda: len(backend.tasks) == 3, "three rollouts running", 60)
            backend.release_all()
            states = await asyncio.wait_for(asyncio.gather(*runs), 60)
    finally:
        proxy.close()
    assert proxy.cut == 1  # one admission for the three, cut after its first line
    assert proxy.polls >= 1  # so their results came by polls
    assert sorted(s["completion"][0]["content"] for s in states) == sorted(
        backend.tasks
    )  # each its own
    assert all(not s.get("error") for s in states)
