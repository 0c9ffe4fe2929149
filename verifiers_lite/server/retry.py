"""Retry schedules and the injectable clock used by :class:`RolloutClient`."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Protocol

#: Result GET: network errors (RemoteProtocolError, NetworkError, ReadTimeout).
NETWORK_RETRY_DELAYS: tuple[float, ...] = (0.1, 0.5)
#: Result GET: HTTP 502, 503, 504.
GATEWAY_RETRY_DELAYS: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
GATEWAY_STATUSES = frozenset({502, 503, 504})
#: wait_idle retries these statuses (and transport errors) until its deadline.
WAIT_IDLE_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
RETRY_AFTER_MIN_SEC = 0.05
RETRY_AFTER_MAX_SEC = 60.0
RETRY_AFTER_DEFAULT_SEC = 1.0
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


def parse_retry_after(value: str | None, hint: object = None) -> float:
    """Seconds to wait after a 429, clamped to 0.05–60 s: the body's finer ``retry_after_sec``
    ``hint`` when it is a finite number, else the header, else 1 s."""
    if isinstance(hint, (int, float)) and not isinstance(hint, bool) and math.isfinite(hint):
        return min(RETRY_AFTER_MAX_SEC, max(RETRY_AFTER_MIN_SEC, float(hint)))
    if value is None:
        return RETRY_AFTER_DEFAULT_SEC
    try:
        seconds = float(value.strip())
    except ValueError:
        return RETRY_AFTER_DEFAULT_SEC  # HTTP-date or garbage: fall back to the default
    if not math.isfinite(seconds):
        return RETRY_AFTER_DEFAULT_SEC
    return min(RETRY_AFTER_MAX_SEC, max(RETRY_AFTER_MIN_SEC, seconds))
