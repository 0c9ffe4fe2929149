"""Waiting for a request slot, measured apart from the request itself.

A model request may wait before it is sent: for the run's bound on requests in flight
(``max_concurrent``) and for a free slot of its endpoint (``ChatClient(slots=N)``: a llama.cpp
server without parallel slots serves one request at a time). That wait is not the model's
time, so it is timed here and the environment records it as ``timing.queue_ms``, apart from
``timing.generation_ms`` (the request itself). The one who awaits the request opens
:func:`slot_wait`; whoever holds a request back awaits :func:`acquire`, which adds the wait to it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from contextvars import ContextVar

_WAITED: ContextVar[list[float] | None] = ContextVar("vf_slot_wait", default=None)


class slot_wait:  # noqa: N801  (a context manager used like a function: ``with slot_wait()``)
    """Collect, for the requests made inside, the seconds they waited for a slot (``box[0]``,
    the list ``with`` gives). A class, not a generator: it is entered on every model call."""

    __slots__ = ("_box", "_token")

    def __enter__(self) -> list[float]:
        self._box = [0.0]
        self._token = _WAITED.set(self._box)
        return self._box

    def __exit__(self, *exc: object) -> None:
        _WAITED.reset(self._token)


async def acquire(semaphore: asyncio.Semaphore) -> None:
    """``await semaphore.acquire()``, the time it took added to the enclosing :func:`slot_wait`."""
    if not semaphore.locked():
        await semaphore.acquire()  # a free slot: no wait to measure
        return
    started = time.perf_counter()
    try:
        await semaphore.acquire()
    finally:
        box = _WAITED.get()
        if box is not None:
            box[0] += time.perf_counter() - started


async def timed_wait(waiting: Awaitable[None]) -> None:
    """``await waiting`` (a wait for a place), the time it took added to the enclosing
    :func:`slot_wait`."""
    started = time.perf_counter()
    try:
        await waiting
    finally:
        box = _WAITED.get()
        if box is not None:
            box[0] += time.perf_counter() - started
