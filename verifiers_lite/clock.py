"""The injectable clock of the rollout server and its client: monotonic time and sleeping.

Leases, retention and the lease sweeper read time through it; tests inject a fake one to move
time forward without waiting.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    """Monotonic time and sleeping; tests inject a fake one to skip long waits."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
