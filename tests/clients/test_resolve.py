"""A stock AsyncOpenAI runs on the lean transport with its settings honoured; the SDK path stays."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

import verifiers_lite as vf
from verifiers_lite.clients.resolve import as_model_client, sdk_only_reason

openai = pytest.importorskip("openai")
httpx2 = pytest.importorskip("httpx2")
web = pytest.importorskip("aiohttp.web")

COMPLETION = {
    "id": "c1",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


class Recorder:
    """A real HTTP server on 127.0.0.1 that answers chat completions and records each request."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.fail_next: list[int] = []
        self.fail_headers: dict[str, str] = {}

    async def handle(self, request: Any) -> Any:
        self.requests.append(
            {
                "headers": {k.lower(): v for k, v in request.headers.items()},
                "query": dict(request.query),
                "body": json.loads(await request.text()),
                "path": request.path,
            }
        )
        if self.fail_next:
            return web.json_response(
                {"error": {"message": "busy"}},
                status=self.fail_next.pop(0),
                headers=self.fail_headers,
            )
        return web.json_response(COMPLETION)


@pytest.fixture
async def recorder() -> AsyncIterator[tuple[Recorder, str]]:
    rec = Recorder()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", rec.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield rec, f"http://127.0.0.1:{port}/v1"
    await runner.cleanup()


async def test_stock_client_goes_lean_with_key_org_headers_and_query_free_body(recorder) -> None:
    rec, url = recorder
    oa = openai.AsyncOpenAI(
        base_url=url,
        api_key="sk-1",
        organization="org-7",
        project="proj-3",
        default_headers={"X-Team": "rl"},
        timeout=9.0,
        max_retries=0,
    )
    client = as_model_client(oa)
    assert isinstance(client, vf.ChatClient) and client.timeout == 9.0
    assert as_model_client(oa) is client  # one pool per user client, across rollouts and runs
    await client.chat(
        "m",
        [{"role": "user", "content": "hi"}],
        {
            "temperature": 0,
            "extra_headers": {"X-Call": "7"},
            "extra_query": {"v": "2"},
            "extra_body": {"top_k": 3},
            "timeout": 5,
        },
    )
    (req,) = rec.requests
    h = req["headers"]
    assert h["authorization"] == "Bearer sk-1" and h["x-team"] == "rl" and h["x-call"] == "7"
    assert h["openai-organization"] == "org-7" and h["openai-project"] == "proj-3"
    assert "AsyncOpenAI" not in h.get("user-agent", "")  # the lean transport, not the SDK
    assert req["query"] == {"v": "2"}
    assert req["body"] == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0,
        "top_k": 3,
    }


async def test_what_the_sdk_sends_matches_what_the_lean_path_sends(recorder) -> None:
    """The same request through the SDK itself (the opt-out) carries the same key, headers, body."""
    rec, url = recorder
    oa = openai.AsyncOpenAI(
        base_url=url,
        api_key="sk-1",
        organization="org-7",
        default_headers={"X-Team": "rl"},
        max_retries=0,
    )
    args = {"temperature": 0, "extra_headers": {"X-Call": "7"}, "extra_body": {"top_k": 3}}
    sdk = as_model_client(vf.OpenAIClientAdapter(oa))
    assert isinstance(sdk, vf.OpenAIClientAdapter)
    for c in (sdk, as_model_client(oa)):
        reply = await c.chat("m", [{"role": "user", "content": "hi"}], dict(args))
        assert reply.content == "ok"
    via_sdk, via_lean = rec.requests
    assert via_sdk["headers"]["user-agent"].startswith("AsyncOpenAI/Python")
    assert via_sdk["body"] == via_lean["body"]
    for name in ("authorization", "x-team", "x-call", "openai-organization"):
        assert via_sdk["headers"][name] == via_lean["headers"][name], name


async def test_max_retries_is_honoured(recorder) -> None:
    rec, url = recorder
    client = as_model_client(openai.AsyncOpenAI(base_url=url, api_key="k", max_retries=0))
    rec.fail_next = [503]
    with pytest.raises(vf.ModelAPIError):
        await client.chat("m", [{"role": "user", "content": "hi"}])
    assert len(rec.requests) == 1  # max_retries=0: one attempt
    client = as_model_client(openai.AsyncOpenAI(base_url=url, api_key="k", max_retries=2))
    assert isinstance(client, vf.ChatClient)
    client.retry = vf.RetryPolicy(
        max_attempts=client.retry.max_attempts, base_delay=0.01, max_delay=0.02
    )
    rec.fail_next = [503, 503]
    assert (await client.chat("m", [{"role": "user", "content": "hi"}])).content == "ok"
    assert len(rec.requests) == 4  # 1 + two retries


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"http_client": "own"}, "http_client"),
        ({"default_query": {"api-version": "1"}}, "default_query"),
        ({"timeout": None}, "no timeout"),
    ],
)
def test_settings_the_lean_path_cannot_honour_keep_the_sdk(
    kwargs: dict[str, Any], reason: str
) -> None:
    if kwargs.get("http_client") == "own":
        kwargs = {"http_client": httpx2.AsyncClient()}
    oa = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k", **kwargs)
    assert reason in (sdk_only_reason(oa) or "")
    assert isinstance(as_model_client(oa), vf.OpenAIClientAdapter)


def test_subclasses_keep_the_sdk() -> None:
    class Mine(openai.AsyncOpenAI):
        pass

    assert isinstance(
        as_model_client(Mine(base_url="http://127.0.0.1:9/v1", api_key="k")), vf.OpenAIClientAdapter
    )


def test_changed_settings_get_a_new_lean_client() -> None:
    oa = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k1")
    first = as_model_client(oa)
    oa.api_key = "k2"
    second = as_model_client(oa)
    assert first is not second and isinstance(second, vf.ChatClient) and second.api_key == "k2"


def test_evaluate_with_a_stock_client_and_with_the_opt_out(fake_server) -> None:
    env = vf.SingleTurnEnv(
        dataset=[{"question": f"{i} + 1", "answer": str(i + 1)} for i in range(3)]
    )
    oa = openai.AsyncOpenAI(base_url=fake_server.base_url, api_key="x", max_retries=0)
    for client in (oa, vf.OpenAIClientAdapter(oa)):
        out = env.evaluate_sync(client, "fake-arith", progress=False)
        assert [r["error"] for r in out.rows] == [None] * 3
    assert fake_server.stats()["requests"] == 6
    asyncio.run(env.evaluate(vf.OpenAIClientAdapter(oa), "fake-arith", progress=False))


def test_proxy_environment_is_followed_only_where_it_applies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for var in (
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
    ):
        monkeypatch.delenv(var, raising=False)
    remote, local = "https://api.example.com/v1", "http://127.0.0.1:9/v1"
    assert not as_model_client(openai.AsyncOpenAI(base_url=remote, api_key="k")).trust_env
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert as_model_client(openai.AsyncOpenAI(base_url=remote, api_key="k")).trust_env
    assert not as_model_client(openai.AsyncOpenAI(base_url=local, api_key="k")).trust_env


async def test_retry_after_ms_is_honoured_before_retry_after(recorder) -> None:
    """OpenAI's retry-after-ms (which the SDK reads first) wins over the coarser Retry-After."""
    rec, url = recorder
    client = as_model_client(openai.AsyncOpenAI(base_url=url, api_key="k", max_retries=1))
    rec.fail_next, rec.fail_headers = [429], {"retry-after-ms": "300", "Retry-After": "30"}
    t0 = asyncio.get_running_loop().time()
    assert (await client.chat("m", [{"role": "user", "content": "hi"}])).content == "ok"
    assert 0.29 <= asyncio.get_running_loop().time() - t0 < 15  # 0.3 s, not 30 s
    assert len(rec.requests) == 2
