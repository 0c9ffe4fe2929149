"""The result on the admission response (``Accept: application/x-ndjson``), negotiated: plain
JSON clients see the usual 202; a stream that breaks or runs out falls back to polling."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import httpx
import pytest

from tests.server.helpers import ServerProc, script
from tests.server.proxy import CutAfterFirstLine
from verifiers_lite.remote import RolloutClient
from verifiers_lite.server.protocol import LEASE_HEADER

MSGS = [{"role": "user", "content": "6*7?"}]
URL = "http://127.0.0.1:9/v1"


def _body(rid: str, **script_kw: Any) -> dict[str, Any]:
    return {
        "rollout_id": rid,
        "initial_messages": MSGS,
        "chat_completions_url": URL,
        "label": "42",
        "metadata": script(**script_kw),
    }


async def test_ndjson_answer_is_the_202_then_what_a_poll_answers(server: ServerProc) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"{server.url}/rollout",
            json=_body("nd1", run_sec=0.3, reward=0.25),
            headers={"Accept": "application/x-ndjson"},
        ) as r:
            assert r.status == 202 and r.headers["content-type"] == "application/x-ndjson"
            first = json.loads(await r.content.readline())
            second = json.loads(await r.content.readline())
            assert await r.content.read() == b""
        assert (
            first["rollout_id"] == "nd1"
            and first["status"] == "queued"
            and first["polling_lease_token"]
        )
        async with http.get(
            f"{server.url}/rollout/nd1/result", headers={LEASE_HEADER: first["polling_lease_token"]}
        ) as r:
            polled = await r.json()
    assert second == polled
    assert second["status"] == "success" and second["sample"]["reward"] == 0.25


async def test_plain_json_clients_still_get_a_plain_202(server: ServerProc) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        for accept in ({}, {"Accept": "application/json"}, {"Accept": "*/*"}):
            r = await http.post(
                "/rollout",
                json=_body(f"pj{len(accept)}{accept.get('Accept', '')[:1]}"),
                headers=accept,
            )
            assert r.status_code == 202 and r.headers["content-type"] == "application/json"
            assert set(r.json()) == {
                "rollout_id",
                "status",
                "polling_lease_token",
                "result_wait_timeout_sec",
                "polling_lease_timeout_sec",
            }


async def test_a_result_that_outlives_the_wait_comes_by_polling(spawn: Any) -> None:
    srv = spawn(wait=0.5)
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            f"{srv.url}/rollout",
            json=_body("slow", run_sec=2),
            headers={"Accept": "application/x-ndjson"},
        ) as r,
    ):
        await r.content.readline()
        assert json.loads(await r.content.readline())["status"] in ("running", "grading")
    async with RolloutClient(srv.url) as client:  # the same through run_state: it polls on
        state = await client.run_state(
            {
                "prompt": MSGS,
                "answer": "42",
                "example_id": 0,
                "task": "t",
                "info": {"script": {"run_sec": 2}},
            },
            chat_completions_url=URL,
            llm_api_key=None,
            model="m",
            sampling_args=None,
        )
    assert state["completion"] == [{"role": "assistant", "content": "42"}]
    assert not state.get("error")


@pytest.fixture
async def cutting(server: ServerProc) -> AsyncIterator[CutAfterFirstLine]:
    proxy = await CutAfterFirstLine(int(server.url.rsplit(":", 1)[1])).start()
    yield proxy
    proxy.close()


async def test_a_stream_cut_after_the_lease_falls_back_to_polling(
    cutting: CutAfterFirstLine,
) -> None:
    async with RolloutClient(f"http://127.0.0.1:{cutting.port}") as client:
        state = await client.run_state(
            {"prompt": MSGS, "answer": "42", "example_id": 0, "task": "t", "info": {}},
            chat_completions_url=URL,
            llm_api_key=None,
            model="m",
            sampling_args=None,
        )
    assert cutting.refused == 1  # no batched routes: the single route, streamed
    assert cutting.cut == 1  # the admission answer was cut; the state came by a poll
    assert state["completion"] == [{"role": "assistant", "content": "42"}]
    assert not state.get("error")
