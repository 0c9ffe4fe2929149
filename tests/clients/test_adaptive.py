"""Adaptive concurrency (``max_concurrent="auto"``): the AIMD limit on a clock that moves only
when told, the rate-limit header reader, and runs against the fake server with a slot-limited
model and with a rate limit."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import verifiers_lite as vf
from verifiers_lite.clients.adaptive import AdaptiveLimit, check_max_concurrent, report_headers
from verifiers_lite.clients.retry import parse_duration, read_rate_limit
from verifiers_lite.core.errors import ModelAPIError
from verifiers_lite.executors.local import LocalExecutor


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


async def _round(limit: AdaptiveLimit, clock: Clock, n: int, latency: float) -> None:
    """``n`` requests at once, each answered after ``latency`` seconds of the clock."""
    entered, answered = asyncio.Event(), asyncio.Event()
    inside = 0

    async def one() -> None:
        nonlocal inside
        async with limit.slot():
            inside += 1
            if inside == n:
                entered.set()
            await answered.wait()

    tasks = [asyncio.ensure_future(one()) for _ in range(n)]
    await entered.wait()  # every one of them in flight together
    clock.t += latency
    answered.set()
    await asyncio.gather(*tasks)


def _limit(**kw: Any) -> tuple[AdaptiveLimit, Clock]:
    clock = Clock()
    return AdaptiveLimit(clock=clock, min_window=1, **kw), clock


def test_slow_start_doubles_while_latency_holds_then_latency_growth_cuts():
    async def main() -> list[int]:
        limit, clock = _limit(initial=2)
        for _ in range(12):
            # a model with 16 slots: latency flat up to 16 in flight, then growing with the load
            n = limit.current
            await _round(limit, clock, n, max(1.0, n / 16))
            if limit.current > 16:
                break
        for _ in range(4):
            await _round(limit, clock, limit.current, 2.0)  # the server slows down (4x load)
        return [lim for _, lim in limit.history]

    # 2 -> 4 -> 8 -> 16 -> 32 on flat latency (each change followed by one window that only
    # settles); twice the latency at 32: cut by 0.9 (28), which shortened it; at 28 the latency
    # (2.0 again) did not shrink: a slower server, whose latency becomes the baseline: no more cuts
    assert asyncio.run(main()) == [2, 4, 8, 16, 32, 28]


def test_no_growth_when_the_run_does_not_use_the_limit():
    async def main() -> int:
        limit, clock = _limit(initial=8)
        for _ in range(5):
            await _round(limit, clock, 3, 1.0)  # only 3 of 8 places used
        return limit.current

    assert asyncio.run(main()) == 8


def test_a_refusal_cuts_the_limit_and_growth_stops_below_the_refused_load():
    async def main() -> tuple[list[int], list[int]]:
        limit, clock = _limit(initial=10, probe_windows=4)
        limit._slow_start = False
        await _round(limit, clock, 10, 1.0)  # 10 -> 11
        limit.refused(None)  # 11 refused: cut to 0.8 * 11
        seen = []
        for _ in range(14):
            await _round(limit, clock, limit.current, 1.0)
            seen.append(limit.current)
        return [lim for _, lim in limit.history], seen

    history, seen = asyncio.run(main())
    # 11 refused -> 8, then +1 per window (each change followed by a settling window) up to 10,
    # below the refused 11, where it stays until a probe (after 4 windows there) tries 11 again;
    # unrefused, it grows on
    assert history[:6] == [10, 11, 8, 9, 10, 11] and history[6:] == [12, 13]
    assert seen.count(10) >= 4 + 1


def test_rate_limit_headers_hold_new_requests_until_the_reset():
    async def main() -> tuple[bool, bool, bool]:
        limit, clock = _limit(initial=4)
        async with limit.slot():
            report_headers(
                {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1.5s"}
            )
        waiting = asyncio.ensure_future(limit.slot().__aenter__())
        await asyncio.sleep(0)
        held = not waiting.done()
        clock.t += 1.0
        limit._wake()
        await asyncio.sleep(0)
        still = not waiting.done()
        clock.t += 0.6
        limit._wake()
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return held, still, waiting.done()

    assert asyncio.run(main()) == (True, True, True)


def test_requests_left_in_a_window_bound_the_starts():
    limit, clock = _limit(initial=8)
    limit.allow(requests_left=2, reset_s=10.0)

    async def main() -> int:
        started = 0

        async def one() -> None:
            nonlocal started
            async with limit.slot():
                started += 1
                await asyncio.sleep(0)

        tasks = [asyncio.ensure_future(one()) for _ in range(5)]
        for _ in range(5):
            await asyncio.sleep(0)
        n = started
        clock.t += 10.0
        limit._wake()
        await asyncio.gather(*tasks)
        return n

    assert asyncio.run(main()) == 2  # two started in the window, the rest after its reset


def test_a_429_in_the_client_reaches_the_limit_of_its_call():
    async def main() -> tuple[int, int]:
        limit, _ = _limit(initial=10)
        with pytest.raises(ModelAPIError):
            async with limit.slot():
                raise ModelAPIError("429", category="model_rate_limited", status=429)
        return limit.current, limit.refusals

    assert asyncio.run(main()) == (8, 1)


def test_rate_limit_header_reader():
    assert parse_duration("6m0s") == 360.0
    assert parse_duration("20ms") == pytest.approx(0.02)
    assert parse_duration("1.5") == 1.5
    assert parse_duration("soon") is None
    said = read_rate_limit(
        {
            "x-ratelimit-remaining-requests": "7",
            "x-ratelimit-reset-requests": "1s",
            "x-ratelimit-remaining-tokens": "0",
            "x-ratelimit-reset-tokens": "2m",
        }
    )
    assert (said.requests_left, said.reset_s, said.wait) == (7, 1.0, 120.0)
    assert read_rate_limit({}) == read_rate_limit({"x-ratelimit-remaining-requests": "x"})


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("auto", None),
        (None, None),
        (3, None),
        ("fast", ValueError),
        (0, ValueError),
        (2.5, TypeError),
        (True, TypeError),
    ],
)
def test_max_concurrent_values(value, error):
    if error is None:
        check_max_concurrent(value)
        assert vf.RunConfig(max_concurrent=value).max_concurrent == value
        vf.SingleTurnEnv(dataset=[{"question": "q", "answer": "a"}], max_concurrent=value)
    else:
        with pytest.raises(error, match="max_concurrent"):
            vf.RunConfig(max_concurrent=value)


# --- against the fake server --------------------------------------------------------------------


def _run(server, max_concurrent: int | str, n: int) -> tuple[float, Any, LocalExecutor]:
    rows = [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(n)]
    executor = LocalExecutor()
    started = time.perf_counter()
    out = vf.SingleTurnEnv(dataset=rows).evaluate_sync(
        vf.ChatClient(server.base_url),
        "fake-arith",
        max_concurrent=max_concurrent,
        executor=executor,
        progress=False,
    )
    return time.perf_counter() - started, out, executor


def test_auto_matches_the_best_fixed_setting_on_a_slot_limited_model(fake_server):
    fake_server.configure(latency_ms=25, slots=4)
    n = 480
    fixed = {k: _run(fake_server, k, n)[0] for k in (4, 16)}
    took, out, executor = _run(fake_server, "auto", n)
    assert not any(r.get("error") for r in out.rows)
    best = min(fixed.values())
    # throughput within 10% of the best fixed setting (ideal: 4 / 25 ms = 160 per second)
    assert n / took >= 0.9 * n / best, (took, fixed)
    assert executor.router is not None
    adaptive = executor.router.endpoints[0].adaptive
    assert adaptive is not None and adaptive.current >= 4  # it found the 4 slots
    assert out.metadata["endpoints"][0]["adaptive"]["peak_limit"] >= 4


def test_auto_backs_off_on_429s_where_a_fixed_setting_keeps_hitting_them(fake_server):
    fake_server.configure(latency_ms=20, rate_limit={"concurrent": 6, "retry_after": 0.05})
    n = 300
    _run(fake_server, 24, n)
    fixed_429s = fake_server.stats()["by_status"].get("429", 0)
    fake_server.reset()
    fake_server.configure(latency_ms=20, rate_limit={"concurrent": 6, "retry_after": 0.05})
    _, out, executor = _run(fake_server, "auto", n)
    auto_429s = fake_server.stats()["by_status"].get("429", 0)
    assert not any(r.get("error") for r in out.rows)
    assert executor.router is not None
    adaptive = executor.router.endpoints[0].adaptive
    assert adaptive is not None and adaptive.refusals == auto_429s > 0
    assert adaptive.current <= 6  # below the load that was refused
    assert auto_429s * 10 < fixed_429s, (auto_429s, fixed_429s)


def test_the_live_displays_show_the_adaptive_limit(fake_server):
    from verifiers_lite.core.progress import RunStats
    from verifiers_lite.ui.notebook.summary_html import stats_line
    from verifiers_lite.ui.terminal_progress import postfix

    stats = RunStats(total=10)
    stats.in_flight = 3
    assert "limit" not in postfix(stats) and "limit" not in stats_line(stats)
    stats.limit_source = lambda: 7
    assert "running=3 limit=7 " in postfix(stats)
    assert "3 running (limit 7, auto)" in stats_line(stats)

    seen: list[int | None] = []
    rows = [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(40)]
    vf.SingleTurnEnv(dataset=rows).evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        max_concurrent="auto",
        progress=False,
        on_progress=lambda s, _rows: seen.append(s.in_flight_limit),
    )
    assert seen and all(isinstance(x, int) and x >= 1 for x in seen)


def test_an_answer_from_the_response_cache_teaches_the_limit_nothing():
    from verifiers_lite.clients.adaptive import report_answered_here

    async def main() -> int:
        limit, clock = _limit(initial=2)
        for _ in range(4):
            async with limit.slot():
                report_answered_here()
                clock.t += 0.001
        return limit._window.done

    assert asyncio.run(main()) == 0  # no latency sample counted
