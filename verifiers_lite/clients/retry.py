"""Retry policies: every backoff schedule and Retry-After rule of the library, in one place.

- :class:`RetryPolicy`: exponential backoff with jitter, honouring Retry-After; model requests
  (:class:`ChatClient`) and reruns of failed rollouts (:data:`ROLLOUT_RETRY`).
- :class:`Schedule`: fixed waits, one per retry; the rollout server client's result polls.
- :class:`RetryAfterRule`: how long to wait on a 429 when a server says (or does not say).
- :func:`parse_retry_after`: the one reader of a Retry-After header (and a body's finer hint).

The retry loop itself is tenacity's (:func:`call_with_retries`); policies are tenacity wait
strategies.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


def parse_retry_after(value: str | None, hint: object = None) -> float | None:
    """Seconds a server asked to wait: a finite number ``hint`` (a response body's finer
    ``retry_after_sec``) first, else the header's delta-seconds form; None when neither says
    (absent, an HTTP-date, garbage, not finite). Never negative."""
    if isinstance(hint, (int, float)) and not isinstance(hint, bool) and math.isfinite(hint):
        return max(0.0, float(hint))
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return max(0.0, seconds) if math.isfinite(seconds) else None


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently a failed request is retried: exponential backoff with full
    jitter in the upper half (``uniform(cap/2, cap)``, ``cap = min(max_delay, base_delay *
    2**(attempt-1))``); a server's Retry-After replaces it, capped at ``max_retry_after``.

    For model requests, retried: 429, 5xx, 408, connection errors and timeouts. Never retried:
    other 4xx (400, 401, 404...), which fail fast with the server's message.
    """

    max_attempts: int = 4
    base_delay: float = 0.25
    max_delay: float = 8.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts!r}")
        if self.base_delay < 0 or self.max_delay < 0 or self.max_retry_after < 0:
            raise ValueError("retry delays must be >= 0")

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 1)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after)
        cap = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        return random.uniform(cap / 2, cap)

    def __call__(self, retry_state: Any) -> float:
        """tenacity wait strategy: the delay after the attempt that just failed, honouring a
        ``retry_after`` on its exception."""
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        return self.delay(retry_state.attempt_number, getattr(exc, "retry_after", None))


@dataclass(frozen=True, slots=True)
class Schedule:
    """Fixed waits: ``delays[n-1]`` before retry ``n``; no retry after the last."""

    delays: tuple[float, ...]

    @property
    def max_retries(self) -> int:
        return len(self.delays)

    def delay(self, retry: int) -> float | None:
        """Seconds before retry ``retry`` (from 1), or None when the schedule is spent."""
        return self.delays[retry - 1] if 1 <= retry <= len(self.delays) else None


@dataclass(frozen=True, slots=True)
class RetryAfterRule:
    """The wait after a 429: what the server asked for, clamped to ``[min, max]``, or
    ``default`` when it did not say."""

    default: float
    min: float
    max: float

    def seconds(self, header: str | None, hint: object = None) -> float:
        asked = parse_retry_after(header, hint)
        return self.default if asked is None else min(self.max, max(self.min, asked))


#: A failed rollout rerun by ``Environment.max_retries``: 0.5 s doubling to 8 s, jittered.
ROLLOUT_RETRY = RetryPolicy(base_delay=0.5, max_delay=8.0)
#: Rollout server result GET after a network error (RemoteProtocolError, NetworkError,
#: ReadTimeout): two retries.
RESULT_POLL_NETWORK = Schedule((0.1, 0.5))
#: Rollout server result GET after HTTP 502, 503 or 504: six retries.
RESULT_POLL_GATEWAY = Schedule((0.25, 0.5, 1.0, 2.0, 4.0, 8.0))
#: Rollout server admission answered 429.
ADMISSION_RETRY_AFTER = RetryAfterRule(default=1.0, min=0.05, max=60.0)


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    retryable: Callable[[BaseException], bool],
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> T:
    """``attempt()``, retried on ``policy`` while ``retryable(exc)``; the last failure propagates.

    The first attempt runs bare: a tenacity loop around every request measured ~0.2 ms more CPU
    per request on the lean transport (0.53 against 0.30-0.35 ms, 64 in flight), and nearly
    every request succeeds at once. Only a failure enters the loop, which replays that failure
    as its attempt 1, so counts and waits are exactly the policy's.
    """
    try:
        return await attempt()
    except Exception as exc:
        if policy.max_attempts <= 1 or not retryable(exc):
            raise
        first: Exception | None = exc

    import tenacity  # only failures pay for the import

    async def again() -> T:
        nonlocal first
        if first is not None:
            failure, first = first, None
            raise failure
        return await attempt()

    retrying = tenacity.AsyncRetrying(
        stop=tenacity.stop_after_attempt(policy.max_attempts),
        wait=policy,
        retry=tenacity.retry_if_exception(retryable),
        sleep=sleep,
        reraise=True,
    )
    return await retrying(again)
