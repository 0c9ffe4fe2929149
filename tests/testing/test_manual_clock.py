"""The tests' manual clock: timers and sleeps come due only when time is advanced, in due order,
from any thread; and the one wait-with-deadline helper fails with what it waited for."""

from __future__ import annotations

import asyncio
import threading

import pytest

from verifiers_lite._util.clock import SystemClock
from verifiers_lite.testing.clock import ManualClock
from verifiers_lite.testing.waiting import wait_until, wait_until_async


def test_timers_fire_in_due_order_once_their_time_comes_and_not_when_cancelled():
    clock, fired = ManualClock(start=5.0), []
    clock.call_later(2.0, lambda: fired.append("b"))
    clock.call_later(1.0, lambda: fired.append("a"))
    dropped = clock.call_later(1.5, lambda: fired.append("dropped"))
    clock.call_later(2.0, lambda: fired.append("c"))  # same time as b: in the order set
    dropped.cancel()
    clock.advance(0.999)
    assert fired == [] and clock.now() == pytest.approx(5.999) and clock.waiting == 3
    clock.advance(1.001)
    assert fired == ["a", "b", "c"] and clock.waiting == 0
    with pytest.raises(ValueError):
        clock.advance(-1)


async def test_a_sleeper_wakes_when_another_thread_advances_time():
    clock = ManualClock()
    sleeper = asyncio.ensure_future(clock.sleep(10))
    await wait_until_async(lambda: clock.waiting == 1, "the sleep registered")
    await asyncio.to_thread(clock.advance, 9)
    for _ in range(20):  # let the loop run: nothing may wake the sleeper yet
        await asyncio.sleep(0)
    assert not sleeper.done()
    await asyncio.to_thread(clock.advance, 1)
    await asyncio.wait_for(sleeper, 10)
    assert clock.sleeps == [10]


async def test_advance_on_sleep_moves_time_by_each_sleep_and_fires_what_came_due():
    clock, fired = ManualClock(1000.0, advance_on_sleep=True), []
    clock.call_later(1.0, lambda: fired.append(clock.now()))
    await clock.sleep(0.5)
    await clock.sleep(0.75)
    assert clock.now() == 1001.25 and clock.sleeps == [0.5, 0.75] and fired == [1001.25]


def test_the_system_clock_timer_runs_on_its_own_thread_and_can_be_cancelled():
    ran, done = [], threading.Event()
    SystemClock().call_later(0.01, lambda: (ran.append(threading.current_thread()), done.set()))
    assert done.wait(30) and ran[0] is not threading.current_thread()
    cancelled: list[int] = []
    timer = SystemClock().call_later(3600, lambda: cancelled.append(1))
    assert isinstance(timer, threading.Timer) and timer.daemon  # never holds the interpreter open
    timer.cancel()
    timer.join(30)  # a cancelled timer's thread ends at once; an hour-long one would not
    assert not timer.is_alive() and cancelled == []


def test_wait_until_returns_the_value_or_names_what_it_waited_for():
    values = iter([0, None, "ready"])
    assert wait_until(lambda: next(values), "a value", interval=0) == "ready"
    with pytest.raises(AssertionError, match=r"not within 0.05s: the impossible \(last: False\)"):
        wait_until(lambda: False, "the impossible", timeout=0.05)
