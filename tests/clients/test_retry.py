"""ChatClient against a real fake server: retries with backoff and jitter on 429/5xx/connection
errors, Retry-After honoured, per-request timeout, fail-fast 4xx carrying the server's message;
and the retry policy module itself (schedules, the one Retry-After reader, the retry loop)."""

from __future__ import annotations

import asyncio
import time

import pytest

import verifiers_lite as vf
from verifiers_lite.clients.retry import (
    ADMISSION_RETRY_AFTER,
    RESULT_POLL_GATEWAY,
    RESULT_POLL_NETWORK,
    ROLLOUT_RETRY,
    Retries,
    RetryAfterRule,
    Schedule,
    call_with_retries,
    parse_retry_after,
)
from verifiers_lite.clients.scripted import ScriptedClient
from verifiers_lite.envs import environment as environment_module
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
    assert (
        info.value.status == 502
        and "upstream down" in str(info.value)
        and "after 4 attempts" in str(info.value)
    )
    assert fake_server.stats()["requests"] == 4


@pytest.mark.parametrize("status", [400, 401, 404])
def test_non_retryable_errors_fail_fast_with_the_servers_message(fake_server, status):
    fake_server.configure(faults=[{"status": status, "message": f"server says no ({status})"}])
    t0 = time.perf_counter()
    with pytest.raises(vf.ModelAPIError) as info:
        chat(
            vf.ChatClient(
                fake_server.base_url,
                retry=vf.RetryPolicy(max_attempts=5, base_delay=60.0, max_delay=60.0),
            )
        )
    assert time.perf_counter() - t0 < 20  # a first backoff would be 30-60 s
    err = info.value
    assert err.status == status and not err.retryable and f"server says no ({status})" in str(err)
    assert fake_server.stats()["requests"] == 1


def test_per_request_timeout(fake_server):
    fake_server.configure(faults=[{"stall": 3}])
    with pytest.raises(vf.ModelAPIError) as info:
        chat(vf.ChatClient(fake_server.base_url, timeout=0.3, retry=vf.RetryPolicy(max_attempts=1)))
    # Cut by the timeout: a reply after the 3 s stall would have been an answer, not an error.
    assert info.value.category == "model_timeout"


def test_connection_refused_is_retried_then_categorised():
    client = vf.ChatClient(
        f"http://127.0.0.1:{free_port()}/v1", retry=vf.RetryPolicy(max_attempts=3, base_delay=0.01)
    )
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
    assert (
        parse_retry_after("2.5") == 2.5
        and parse_retry_after("soon") is None
        and parse_retry_after(None) is None
    )


# -- the policy module itself ---------------------------------------------------------------------


class Flaky(Exception):
    def __init__(self, retry_after: float | None = None, retryable: bool = True) -> None:
        super().__init__("flaky")
        self.retry_after, self.retryable = retry_after, retryable


def _run(failures: list[Flaky], policy: vf.RetryPolicy) -> tuple[object, int, list[float]]:
    """call_with_retries over an attempt that raises ``failures`` in turn, then returns "ok"."""
    calls, sleeps = 0, []

    async def attempt() -> str:
        nonlocal calls
        calls += 1
        if failures:
            raise failures.pop(0)
        return "ok"

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    async def main() -> object:
        try:
            return await call_with_retries(
                attempt, policy, lambda e: getattr(e, "retryable", False), sleep=sleep
            )
        except Flaky as exc:
            return exc

    return asyncio.run(main()), calls, sleeps


def test_call_with_retries_waits_on_the_policy_and_honours_retry_after():
    p = vf.RetryPolicy(max_attempts=4, base_delay=1.0, max_delay=3.0, max_retry_after=5.0)
    result, calls, sleeps = _run([Flaky(), Flaky(retry_after=2.5), Flaky(retry_after=60)], p)
    assert result == "ok" and calls == 4
    assert 0.5 <= sleeps[0] <= 1.0 and sleeps[1:] == [
        2.5,
        5.0,
    ]  # attempt 1: cap 1 s; then asked, capped


def test_call_with_retries_stops_at_max_attempts_and_on_non_retryable():
    last = Flaky()
    result, calls, sleeps = _run(
        [Flaky(), Flaky(), last, Flaky()], vf.RetryPolicy(max_attempts=3, base_delay=0)
    )
    assert result is last and calls == 3 and sleeps == [0.0, 0.0]
    fatal = Flaky(retryable=False)
    result, calls, sleeps = _run([Flaky(), fatal], vf.RetryPolicy(max_attempts=5, base_delay=0))
    assert result is fatal and calls == 2
    first = Flaky()
    result, calls, sleeps = _run([first], vf.RetryPolicy(max_attempts=1))
    assert result is first and calls == 1 and sleeps == []


def test_the_librarys_schedules():
    # Failed rollouts: 0.5 s doubling to 8 s, each jittered into [cap/2, cap].
    for attempt, cap in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 8.0), (7, 8.0)]:
        assert all(cap / 2 <= ROLLOUT_RETRY.delay(attempt) <= cap for _ in range(100))
    # Result polls of the rollout server client: fixed schedules, then none.
    assert [RESULT_POLL_NETWORK.delay(n) for n in (1, 2, 3)] == [0.1, 0.5, None]
    assert [RESULT_POLL_GATEWAY.delay(n) for n in range(1, 8)] == [
        0.25,
        0.5,
        1.0,
        2.0,
        4.0,
        8.0,
        None,
    ]
    assert Schedule(()).delay(1) is None and RESULT_POLL_GATEWAY.max_retries == 6
    # Admission 429: what the server asked (body hint first), clamped to [0.05, 60], default 1 s.
    assert ADMISSION_RETRY_AFTER.seconds("7", hint=0.25) == 0.25
    assert ADMISSION_RETRY_AFTER.seconds("7", hint=True) == 7.0  # a bool is no hint
    assert ADMISSION_RETRY_AFTER.seconds(None, hint=float("inf")) == 1.0


def test_retries_count_against_the_schedule_the_limit_and_the_deadline():
    fixed = Schedule((1.0, 2.0, 3.0))
    spent = fixed.retries()
    assert [spent.next_delay() for _ in range(4)] == [1.0, 2.0, 3.0, None] and spent.done == 3
    limited = fixed.retries(limit=2)
    assert [limited.next_delay() for _ in range(3)] == [1.0, 2.0, None] and limited.done == 2
    # waiting 2 s from t=1 plus 1 s of work ends at 4 >= 3.5: refused, and not counted
    bounded = fixed.retries()
    assert bounded.next_delay(now=0.0, deadline=3.5, then=1.0) == 1.0
    assert bounded.next_delay(now=1.0, deadline=3.5, then=1.0) is None and bounded.done == 1
    # a server's Retry-After moves a RetryPolicy's and a RetryAfterRule's waits, not a fixed schedule's
    assert vf.RetryPolicy(max_retry_after=5).retries().next_delay(9.0) == 5.0
    assert Schedule((0.1,)).retries().next_delay(9.0) == 0.1
    rule = RetryAfterRule(default=1.0, min=0.5, max=4.0).retries()
    assert [rule.next_delay(a) for a in (None, 0.1, 9.0, 2.0)] == [1.0, 0.5, 4.0, 2.0]
    assert vf.RetryPolicy(max_attempts=3).retries().limit == 2


class _Recorded:
    """A schedule that records the retries it is asked about."""

    def __init__(self, delays: tuple[float, ...]) -> None:
        self.delays, self.asked = delays, []

    def delay(self, retry: int, retry_after: float | None = None) -> float | None:
        self.asked.append(retry)
        return self.delays[retry - 1] if retry <= len(self.delays) else None

    def retries(self, limit: int | None = None) -> Retries:
        return Retries(self, limit)


@pytest.mark.parametrize(
    ("max_retries", "delays", "attempts", "asked"),
    [(5, (0.0, 0.0), 3, [1, 2, 3]), (1, (0.0, 0.0, 0.0), 2, [1])],
)
def test_a_failed_rollout_is_rerun_on_the_shared_rollout_schedule(
    monkeypatch, max_retries, delays, attempts, asked
):
    """Reruns stop at whichever ends first: the environment's max_retries or the schedule."""
    schedule = _Recorded(delays)
    monkeypatch.setattr(environment_module, "ROLLOUT_RETRY", schedule)
    calls = 0

    def down(messages):
        nonlocal calls
        calls += 1
        raise vf.ModelAPIError(
            "upstream down", category="model_http_error", status=502, retryable=True
        )

    env = vf.SingleTurnEnv(dataset=[{"question": "1 + 1", "answer": "2"}], max_retries=max_retries)
    out = env.evaluate_sync(ScriptedClient(down), "scripted", progress=False)
    (row,) = out.rows
    assert calls == attempts and row["error"]["category"] == "model_http_error"
    assert schedule.asked == asked


def test_one_retry_after_reader():
    assert parse_retry_after(" 3 ") == 3.0 and parse_retry_after("-2") == 0.0
    assert (
        parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") is None
        and parse_retry_after("inf") is None
    )
    assert parse_retry_after("9", hint=0.2) == 0.2 and parse_retry_after(None, hint="0.2") is None


def test_retry_policy_rejects_nonsense():
    with pytest.raises(ValueError, match="max_attempts"):
        vf.RetryPolicy(max_attempts=0)


def test_a_dead_server_process_fails_at_once_as_crashed_not_retried():
    """process_check (a supervisor's view of the server process) stops the retry loop."""
    from verifiers_lite.testing.fake_server import FakeServerProcess

    server = FakeServerProcess().start()
    proc = server.proc
    assert proc is not None
    checks: list[float] = []

    def process_check(wait: float) -> str | None:
        checks.append(wait)
        try:
            code = proc.wait(wait)
        except Exception:
            return None
        return f"exited with {code}"

    client = vf.ChatClient(
        server.base_url,
        process_check=process_check,
        retry=vf.RetryPolicy(max_attempts=5, base_delay=60.0, max_delay=60.0),
    )
    assert "boxed" in chat(client).content
    proc.kill()
    proc.wait()
    t0 = time.perf_counter()
    with pytest.raises(vf.ModelAPIError) as info:
        chat(client)
    assert info.value.category == "model_crashed" and "exited with" in str(info.value)
    with pytest.raises(vf.ModelAPIError) as again:
        chat(client)
    assert again.value.category == "model_crashed" and len(checks) == 1  # decided once
    assert time.perf_counter() - t0 < 20  # no backoff (30-60 s) was slept
    server.stop()
