"""Retry policies: every backoff schedule and Retry-After rule of the library, in one place.

- :class:`RetryPolicy`: exponential backoff with jitter, honouring Retry-After; model requests
  (:class:`ChatClient`) and reruns of failed rollouts (:data:`ROLLOUT_RETRY`).
- :class:`Schedule`: fixed waits, one per retry; the rollout server client's result polls.
- :class:`RetryAfterRule`: how long to wait on a 429 when a server says (or does not say).
- :func:`parse_retry_after`: the one reader of a Retry-After header (and a body's finer hint).
- :func:`read_rate_limit`: the one reader of ``x-ratelimit-*`` headers (requests left, reset).
- :class:`RepeatedAnswer`: an HTTP 500 answered twice alike to one request is not retried again.
- :class:`Retries`: one operation's count of retries on one of those schedules, bounded by its
  length and an optional deadline; every retry loop of the library asks it whether to retry and
  how long to wait (:func:`call_with_retries` for model requests, rollout reruns, result polls,
  admission 429s).
"""

from __future__ import annotations

import asyncio
import math
import random
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

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


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: str | None) -> float | None:
    """Seconds in a rate-limit reset: a number of seconds (``"1.5"``) or a duration as
    OpenAI writes it (``"6m0s"``, ``"20ms"``); None when it is neither."""
    if not value:
        return None
    text = value.strip()
    seconds = parse_retry_after(text)
    if seconds is not None:
        return seconds
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNITS[u] for n, u in parts)


@dataclass(frozen=True, slots=True)
class RateLimitHeaders:
    """What a provider's ``x-ratelimit-*`` headers say: requests left in its window and the
    seconds until it resets (``x-ratelimit-remaining-requests`` / ``-reset-requests``, or the
    plain ``x-ratelimit-remaining`` / ``-reset``), and how long none may be sent because some
    limit (requests or tokens) has nothing left (``wait``)."""

    requests_left: int | None = None
    reset_s: float | None = None
    wait: float | None = None


def read_rate_limit(headers: Mapping[str, str]) -> RateLimitHeaders:
    """The one reader of ``x-ratelimit-*`` headers (all None when there are none)."""
    requests_left: int | None = None
    reset_s: float | None = None
    wait: float | None = None
    for kind in ("-requests", "-tokens", ""):
        try:
            left = float(headers.get(f"x-ratelimit-remaining{kind}", ""))
        except ValueError:
            continue
        reset = parse_duration(headers.get(f"x-ratelimit-reset{kind}"))
        if kind != "-tokens" and requests_left is None and math.isfinite(left):
            requests_left, reset_s = max(0, int(left)), reset
        if left <= 0 and reset is not None:
            wait = reset if wait is None else max(wait, reset)
    return RateLimitHeaders(requests_left, reset_s, wait)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently a failed request is retried: exponential backoff with full
    jitter in the upper half (``uniform(cap/2, cap)``, ``cap = min(max_delay, base_delay *
    2**(attempt-1))``); a server's Retry-After replaces it, capped at ``max_retry_after``.

    For model requests, retried: 429, 5xx, 408, connection errors and timeouts. Never retried:
    other 4xx (400, 401, 404...), which fail fast with the server's message; nor an HTTP 500
    answered twice in a row with the same body to the same request (:class:`RepeatedAnswer`),
    a deterministic failure of the server rather than a transient one.
    """

    max_attempts: int = 4  #: tries in all, the first included (at least 1)
    base_delay: float = 0.25  #: seconds of the first backoff's cap
    max_delay: float = 8.0  #: the backoff's cap at most, in seconds
    max_retry_after: float = 60.0  #: a server's Retry-After is honoured up to this many seconds

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

    def retries(self, limit: int | None = None) -> Retries:
        """A fresh count of retries: ``limit`` of them (default ``max_attempts - 1``)."""
        return Retries(self, self.max_attempts - 1 if limit is None else limit)


@dataclass(frozen=True, slots=True)
class Schedule:
    """Fixed waits: ``delays[n-1]`` before retry ``n``; no retry after the last."""

    delays: tuple[float, ...]

    @property
    def max_retries(self) -> int:
        return len(self.delays)

    def delay(self, retry: int, retry_after: float | None = None) -> float | None:
        """Seconds before retry ``retry`` (from 1), or None when the schedule is spent (fixed:
        a server's Retry-After does not change it)."""
        return self.delays[retry - 1] if 1 <= retry <= len(self.delays) else None

    def retries(self, limit: int | None = None) -> Retries:
        """A fresh count of retries: one per delay, ``limit`` at most."""
        return Retries(self, limit)


@dataclass(frozen=True, slots=True)
class RetryAfterRule:
    """The wait after a 429: what the server asked for, clamped to ``[min, max]``, or
    ``default`` when it did not say."""

    default: float
    min: float
    max: float

    def seconds(self, header: str | None, hint: object = None) -> float:
        return self.delay(1, parse_retry_after(header, hint))

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds before retry ``retry``: ``retry_after`` (seconds the server asked) clamped,
        else ``default``; the same for every retry."""
        return self.default if retry_after is None else min(self.max, max(self.min, retry_after))

    def retries(self, limit: int | None = None) -> Retries:
        """A fresh count of retries, ``limit`` at most (None: a deadline bounds them)."""
        return Retries(self, limit)


@dataclass(slots=True)
class RepeatedAnswer:
    """Spots a deterministic failure among one request's attempts: the same answer (status and
    body) twice in a row. Only an HTTP 500 counts: 502, 503, 504, 408 and 429 say "try later"
    even when their bodies repeat, and keep the whole schedule."""

    last: object = None

    def repeated(self, status: int | None, body: str) -> bool:
        """Record this attempt's answer; True when it is a 500 like the one before."""
        answer = (status, body) if status == 500 else None
        repeated, self.last = answer is not None and answer == self.last, answer
        return repeated


class Backoff(Protocol):
    """A schedule of waits: seconds before retry ``retry`` (from 1), None when it has none."""

    def delay(self, retry: int, retry_after: float | None = None) -> float | None: ...


@dataclass(slots=True)
class Retries:
    """One operation's retries on one schedule: :meth:`next_delay` says whether another retry
    may start and how long to wait before it, and counts it."""

    backoff: Backoff
    limit: int | None  #: most retries; None: only a deadline stops them
    done: int = 0  #: retries granted so far

    def next_delay(
        self,
        retry_after: float | None = None,
        *,
        now: float = 0.0,
        deadline: float | None = None,
        then: float = 0.0,
    ) -> float | None:
        """Seconds to wait before the next retry, or None (nothing counted) when the limit is
        reached, the schedule is spent, or waiting plus ``then`` seconds of work from ``now``
        would not end before ``deadline``. ``retry_after``: seconds the server asked to wait."""
        if self.limit is not None and self.done >= self.limit:
            return None
        delay = self.backoff.delay(self.done + 1, retry_after)
        if delay is None or (deadline is not None and now + delay + then >= deadline):
            return None
        self.done += 1
        return delay


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
    """``attempt()``, retried on ``policy`` while ``retryable(exc)`` (waiting what a failure's
    ``retry_after`` asks, if it says); the last failure propagates."""
    try:
        return await attempt()
    except Exception as exc:
        failure = exc
    retries = policy.retries()
    while True:
        delay = (
            retries.next_delay(getattr(failure, "retry_after", None))
            if retryable(failure)
            else None
        )
        if delay is None:
            raise failure
        await sleep(delay)
        try:
            return await attempt()
        except Exception as exc:
            failure = exc
