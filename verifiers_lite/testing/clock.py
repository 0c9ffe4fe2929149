"""A clock that moves only when told, for tests of anything that takes a
:class:`verifiers_lite._util.clock.Clock`: leases, retries, shutdown phases, display throttling."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(order=True)
class _Pending:
    due: float
    order: int
    fire: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """Time stands still until :meth:`advance` moves it; sleeps and timers then come due.

    With ``advance_on_sleep`` every :meth:`sleep` moves time by its own length and returns at once
    (a retry schedule then runs in no time). Every sleep's length is kept in ``sleeps``.
    ``advance`` may be called from any thread: timer callbacks run on that thread, a sleeper
    wakes on its own event loop.
    """

    def __init__(self, start: float = 0.0, *, advance_on_sleep: bool = False) -> None:
        self.t = start
        self.advance_on_sleep = advance_on_sleep
        self.sleeps: list[float] = []
        self._lock = threading.Lock()
        self._pending: list[_Pending] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self.t

    def call_later(self, seconds: float, callback: Callable[[], None]) -> _Pending:
        with self._lock:
            pending = _Pending(self.t + seconds, next(self._order), callback)
            heapq.heappush(self._pending, pending)
        return pending

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        if self.advance_on_sleep:
            self.advance(seconds)
        if seconds <= 0 or self.advance_on_sleep:
            await asyncio.sleep(0)
            return
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not woken.done():
                woken.set_result(None)

        def wake_on_its_loop() -> None:
            loop.call_soon_threadsafe(wake)

        timer = self.call_later(seconds, wake_on_its_loop)
        try:
            await woken
        finally:
            timer.cancel()

    def advance(self, seconds: float) -> None:
        """Move time forward and run, in due order, every timer and sleep that came due."""
        if seconds < 0:
            raise ValueError(f"time only moves forward (advance({seconds}))")
        with self._lock:
            self.t += seconds
            due = []
            while self._pending and self._pending[0].due <= self.t:
                due.append(heapq.heappop(self._pending))
        for pending in due:
            if not pending.cancelled:
                pending.fire()

    @property
    def waiting(self) -> int:
        """Timers and sleeps not yet due (cancelled ones excluded)."""
        with self._lock:
            return sum(not p.cancelled for p in self._pending)
