"""Streamed answers are read line by line whatever a line's size: a batch's first line or a
rollout's state can exceed aiohttp's own line limit (512 KiB), and such a line must arrive
whole rather than fail the admission or send the result to a poll."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.server.helpers import serve_in_process
from tests.server.proxy import FaultProxy
from verifiers_lite.remote import RolloutClient
from verifiers_lite.remote.transport import _Lines

BIG = 700 * 1024  # over aiohttp's 512 KiB line limit


class Chunks:
    """A response body arriving in the given pieces (what ``readany`` hands out)."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = list(pieces)

    async def readany(self) -> bytes:
        return self.pieces.pop(0) if self.pieces else b""


async def _read_all(pieces: list[bytes]) -> list[bytes]:
    lines, reader = [], _Lines(Chunks(pieces))
    while line := await reader.next():
        lines.append(line)
    return lines


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=20),
    last_unterminated=st.booleans(),
)
def test_lines_come_out_as_they_went_in_however_the_body_is_cut(
    lines: list[bytes], cuts: list[int], last_unterminated: bool
) -> None:
    expected = [line + b"\n" for line in lines] + ([b"tail"] if last_unterminated else [])
    body = b"".join(expected)
    points = sorted({min(c, len(body)) for c in cuts} | {0, len(body)})
    pieces = [body[a:b] for a, b in zip(points, points[1:], strict=False) if b > a]
    assert asyncio.run(_read_all(pieces)) == expected


def test_a_line_longer_than_aiohttps_limit_arrives_whole() -> None:
    big = b"x" * BIG + b"\n"
    pieces = [big[i : i + 65536] for i in range(0, len(big), 65536)] + [b"next\n"]
    assert asyncio.run(_read_all(pieces)) == [big, b"next\n"]


class BigStateBackend:
    """Each rollout returns a completion of BIG characters, made of its own id."""

    max_admitted: int | None = None
    retry_after_sec = 1.0

    async def execute(self, request: Any, ctx: Any) -> dict[str, Any]:
        content = (request.rollout_id * (BIG // len(request.rollout_id) + 1))[:BIG]
        return {"completion": [{"role": "assistant", "content": content}], "metrics": {}}

    async def cancel(self, rollout_id: str) -> None:
        return None

    def health(self) -> dict[str, Any]:
        return {}

    async def shutdown(self) -> None:
        return None


@pytest.fixture
async def big_server() -> AsyncIterator[str]:
    async with serve_in_process(BigStateBackend()) as (_, url):
        yield url


async def test_a_state_larger_than_aiohttps_line_limit_comes_off_the_admission_stream(
    big_server: str,
) -> None:
    proxy = await FaultProxy(
        int(big_server.rsplit(":", 1)[1]), match="never"
    ).start()  # counts requests
    try:
        async with RolloutClient(proxy.url) as client:
            states = await asyncio.gather(
                *(
                    client.run_state(
                        {
                            "prompt": [{"role": "user", "content": "q"}],
                            "answer": "",
                            "example_id": i,
                            "task": "t",
                            "info": {},
                        },
                        chat_completions_url="http://127.0.0.1:9/v1",
                        llm_api_key=None,
                        model="m",
                        sampling_args=None,
                    )
                    for i in range(2)
                )
            )
    finally:
        await proxy.close()
    contents = [s["completion"][0]["content"] for s in states]
    assert all(len(c) == BIG for c in contents) and contents[0] != contents[1]
    assert not any(s.get("error") for s in states)
    paths = [s.split()[1] for s in proxy.seen]
    assert paths == ["/rollouts"]  # one admission; both results on its stream, no poll
