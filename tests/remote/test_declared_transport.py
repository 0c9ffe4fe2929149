"""A transport of the user's own, not a subclass of ours, is used by what it declares: one that
declares ``streams_lines`` gets the results on the admission responses; one that does not is
never asked to stream and its rollouts come by polling, with the same states."""

from __future__ import annotations

from typing import Any

from tests.server.helpers import ServerProc, script
from verifiers_lite.remote import RolloutClient
from verifiers_lite.remote.transport import AiohttpTransport, Reply

MSGS = [{"role": "user", "content": "6*7?"}]
URL = "http://127.0.0.1:9/v1"


class _Counting:
    """Sends through an aiohttp transport it holds; declares what it is told to."""

    def __init__(self, streams_lines: bool) -> None:
        self.streams_lines = streams_lines
        self.inner = AiohttpTransport()
        self.requests: list[str] = []
        self.streamed: list[str] = []

    async def request(self, method: str, url: str, **kwargs: Any) -> Reply:
        self.requests.append(f"{method} {url.split('/', 3)[3]}")
        return await self.inner.request(method, url, **kwargs)

    async def post_lines(self, url: str, **kwargs: Any) -> Reply:
        assert self.streams_lines, "a transport that does not stream was asked to"
        self.streamed.append(url.split("/", 3)[3])
        return await self.inner.post_lines(url, **kwargs)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _states(server: ServerProc, transport: _Counting) -> list[Any]:
    async with RolloutClient(server.url, transport=transport) as client:
        return [
            await client.run_state(
                {
                    "prompt": MSGS,
                    "answer": "42",
                    "example_id": i,
                    "task": "t",
                    "info": {"script": script(reward=0.5)["script"]},
                },
                chat_completions_url=URL,
                llm_api_key=None,
                model="m",
                sampling_args=None,
            )
            for i in range(2)
        ]


async def test_a_transport_declaring_streams_lines_gets_results_on_admission(
    server: ServerProc,
) -> None:
    transport = _Counting(streams_lines=True)
    states = await _states(server, transport)
    assert transport.streamed and not any("result" in r for r in transport.requests)
    assert [s["completion"] for s in states] == [[{"role": "assistant", "content": "42"}]] * 2
    assert not any(s.get("error") for s in states)


async def test_a_transport_that_does_not_stream_is_polled(server: ServerProc) -> None:
    transport = _Counting(streams_lines=False)
    states = await _states(server, transport)
    assert transport.streamed == [] and any("result" in r for r in transport.requests)
    assert [s["completion"] for s in states] == [[{"role": "assistant", "content": "42"}]] * 2
    assert not any(s.get("error") for s in states)
