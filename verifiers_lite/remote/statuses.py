"""The injectable clock and the retried statuses of :class:`RolloutClient`.

The clock is the one the server uses too (:mod:`verifiers_lite._util.clock`); the retry schedules and
Retry-After rule are policies of :mod:`verifiers_lite.clients.retry`.
"""

from __future__ import annotations

from verifiers_lite._util.clock import Clock, SystemClock

__all__ = [
    "CANCEL_TIMEOUT_SEC",
    "GATEWAY_STATUSES",
    "WAIT_IDLE_RETRY_STATUSES",
    "Clock",
    "SystemClock",
]

GATEWAY_STATUSES = frozenset({502, 503, 504})
#: wait_idle retries these statuses (and transport errors) until its deadline.
WAIT_IDLE_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
CANCEL_TIMEOUT_SEC = 5.0
