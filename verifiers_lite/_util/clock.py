"""The injectable clock: monotonic time, sleeping and timers.

The rollout server (leases, retention, the lease sweeper, the shutdown phases), its client and
the notebook display's flush timer read time through it; tests inject
:class:`verifiers_lite.testing.clock.ManualClock` to move time forward without waiting.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Protocol


class Timer(Protocol):
    """A pending :meth:`Clock.call_later` callback."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """Monotonic time, sleeping and timers; tests inject a manual one to skip long waits."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...

    def call_later(self, seconds: float, callback: Callable[[], None]) -> Timer:
        """Call ``callback`` once, ``seconds`` from now, on a thread of the clock's choosing."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def call_later(self, seconds: float, callback: Callable[[], None]) -> Timer:
        timer = threading.Timer(seconds, callback)
        timer.daemon = True  # a pending redraw must not keep the interpreter alive
        timer.start()
        return timer
