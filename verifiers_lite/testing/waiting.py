"""Waiting for something to happen, with a deadline: the one polling helper of the tests.

A test that needs another process or thread to reach a state polls for that state (and fails
with what it was waiting for) instead of sleeping a guessed time.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

T = TypeVar("T")


def wait_until(
    check: Callable[[], T], what: str, timeout: float = 30.0, interval: float = 0.02
) -> T:
    """Call ``check`` until it returns a truthy value and return it; AssertionError (naming
    ``what`` and the last value) once ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what} (last: {value!r})")
        time.sleep(interval)


async def wait_until_async(
    check: Callable[[], T | Awaitable[T]], what: str, timeout: float = 30.0, interval: float = 0.01
) -> T:
    """:func:`wait_until` for a coroutine: the event loop runs while it waits, and ``check`` may
    be a coroutine function (an HTTP request, say)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return cast(T, value)
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what} (last: {value!r})")
        await asyncio.sleep(interval)
