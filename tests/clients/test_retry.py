"""ChatClient against a real fake server: retries with backoff and jitter on 429/5xx/connection
errors, Retry-After honoured, per-request timeout, fail-fast 4xx carrying the server's message."""

from __future__ import annotations

import asyncio
import time

import pytest

import verifiers_lite as vf
from verifiers_lite.clients.retry import parse_retry_after
from verifiers_lite.testing.fake_server import free_port

MSG = [{"role": "user", "content": "What is 2 + 2?"}]
FAST = vf.RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)


def chat(client: vf.ChatClient, model: str = "fake-arith"):
    return asyncio.run(client.chat(model, MSG, {"temperature": 0}))


def test_5xx_and_dropped_connections_are_retried(fake_server):
    fake_server.configure(faults=[{"status": 500}, {"drop": True}, {"status": 503}])
    reply = chat(vf.ChatClient(fake_server.base_url, retry=FAST))
    assert "boxed" in reply.content
    assert fake_server.stats()["requests"] == 4


def test_429_honours_retry_after(fake_server):
    fake_server.configure(faults=[{"status": 429, "retry_after": 0.4}])
    t0 = time.perf_counter()
    chat(vf.ChatClient(fake_server.base_url, retry=FAST))
    assert time.perf_counter() - t0 >= 0.38
    assert fake_server.stats()["requests"] == 2


def test_retry_budget_exhausted_raises_with_attempt_count(fake_server):
    fake_server.configure(faults=[{"status": 502, "message": "upstream down"}] * 10)
    with pytest.raises(vf.ModelAPIError) as info:
        chat(vf.ChatClient(fake_server.base_url, retry=FAST))
    assert info.value.status == 502 and "upstream down" in str(info.value) and "after 4 attempts" in str(info.value)
    assert fake_server.stats()["requests"] == 4


@pytest.mark.parametrize("status", [400, 401, 404])
def test_non_retryable_errors_fail_fast_with_the_servers_message(fake_server, status):
    fake_server.configure(faults=[{"status": status, "message": f"server says no ({status})"}])
    t0 = time.perf_counter()
    with pytest.raises(vf.ModelAPIError) as info:
        chat(vf.ChatClient(fake_server.base_url, retry=vf.RetryPolicy(max_attempts=5, base_delay=1.0)))
    assert time.perf_counter() - t0 < 0.9
    err = info.value
    assert err.status == status and not err.retryable and f"server says no ({status})" in str(err)
    assert fake_server.stats()["requests"] == 1


def test_per_request_timeout(fake_server):
    fake_server.configure(faults=[{"stall": 3}])
    t0 = time.perf_counter()
    with pytest.raises(vf.ModelAPIError) as info:
        chat(vf.ChatClient(fake_server.base_url, timeout=0.3, retry=vf.RetryPolicy(max_attempts=1)))
    assert info.value.category == "model_timeout" and time.perf_counter() - t0 < 2.5


def test_connection_refused_is_retried_then_categorised():
    client = vf.ChatClient(f"http://127.0.0.1:{free_port()}/v1", retry=vf.RetryPolicy(max_attempts=3, base_delay=0.01))
    with pytest.raises(vf.ModelAPIError) as info:
        chat(client)
    assert info.value.category == "model_connection" and "after 3 attempts" in str(info.value)


def test_backoff_is_exponential_with_jitter_and_capped():
    p = vf.RetryPolicy(base_delay=0.5, max_delay=4.0, max_retry_after=10.0)
    for attempt, cap in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (9, 4.0)]:
        delays = {p.delay(attempt) for _ in range(200)}
        assert all(cap / 2 <= d <= cap for d in delays)
        assert len(delays) > 100  # jittered, not a fixed schedule
    assert p.delay(1, retry_after=3.0) == 3.0 and p.delay(1, retry_after=99.0) == 10.0
    assert parse_retry_after("2.5") == 2.5 and parse_retry_after("soon") is None and parse_retry_after(None) is None
