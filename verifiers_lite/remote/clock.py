"""The injectable clock and the retried statuses of :class:`RolloutClient`.

Its retry schedules and Retry-After rule are policies of :mod:`verifiers_lite.clients.retry`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

GATEWAY_STATUSES = frozenset({502, 503, 504})
#: wait_idle retries these statuses (and transport errors) until its deadline.
WAIT_IDLE_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
CANCEL_TIMEOUT_SEC = 5.0


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
