"""Adaptive concurrency: how many requests one endpoint gets at once when a run says
``max_concurrent="auto"``.

:class:`AdaptiveLimit` is an AIMD controller over windows of finished requests (a window is
one limit's worth of them, at least :attr:`AdaptiveLimit.min_window`):

- **increase** while throughput can rise: the limit doubles per window until the first sign of
  overload (slow start), then grows by one per window; only when the window used the whole
  limit (a run with fewer requests to send learns nothing from it);
- **decrease on latency growth**: a window whose mean latency is past ``latency_tolerance``
  times the lowest window mean seen means requests queue in the server (a slot-limited model
  serves N at once and queues the rest: more in flight only adds waiting), so the limit shrinks
  by ``latency_backoff``; a latency that shrinking did not cure is the server's new normal and
  becomes the baseline (longer answers are not queueing);
- **decrease on 429, 503 and timeouts** by ``backoff`` (once per window: a burst of refusals
  from one round counts once), and remember that limit as a ceiling: growth stops below it and
  probes past it only after ``probe_windows`` windows (doubled on each failed probe), so a run
  pays for a rate limit's refusal rarely instead of once per sawtooth;
- **respect** what the server asked: ``x-ratelimit-*`` headers (read by
  :func:`~verifiers_lite.clients.retry.read_rate_limit`) saying how many requests are left until
  a reset let that many more start before it (the latest answer's count: the server counted
  the requests it has received), and none left holds every new request of the endpoint until
  the reset;
  so does a refusal's ``Retry-After`` once more refusals than the limit came with no answer
  between them (the endpoint refuses everything, not just the load past its limit);
  the refused request itself waits what it was told (the client's
  :class:`~verifiers_lite.clients.retry.RetryPolicy`, whose ``max_retry_after`` caps both).

The endpoint's client reports each attempt's refusals and rate-limit headers through
:func:`report_refusal` and :func:`report_headers` to the limit of the call in progress (a
context variable set by :meth:`AdaptiveLimit.slot`), so retries inside the client are seen as
they happen, not only when the call ends.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from verifiers_lite.clients.retry import RetryPolicy, read_rate_limit
from verifiers_lite.clients.slots import timed_wait

#: The value of ``max_concurrent`` that asks for an adaptive limit per endpoint.
AUTO = "auto"
#: What a 429, a 503 or a timeout say about the endpoint: too much at once.
OVERLOAD_CATEGORIES = frozenset({"model_rate_limited", "model_timeout"})
OVERLOAD_STATUSES = frozenset({429, 503})
#: The most requests one endpoint's adaptive limit grows to.
MAX_LIMIT = 256


@dataclass(slots=True)
class _Call:
    """One request in flight under a limit: whether its attempts met a refusal."""

    limit: AdaptiveLimit
    refused: bool = False
    answered_here: bool = False  # answered without a request (the response cache)


_CALL: ContextVar[_Call | None] = ContextVar("vf_adaptive_call", default=None)


@dataclass(slots=True)
class _Window:
    started: float
    done: int = 0
    latency_sum: float = 0.0
    peak: int = 0  # most requests in flight during it
    refused: bool = False


@dataclass(slots=True)
class AdaptiveLimit:
    """One endpoint's limit on requests in flight, adapted as they finish (see the module)."""

    initial: int = 2
    minimum: int = 1
    maximum: int = MAX_LIMIT
    min_window: int = 8
    latency_tolerance: float = 1.5
    latency_backoff: float = 0.9
    backoff: float = 0.8
    probe_windows: int = 16
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    clock: Callable[[], float] = time.monotonic

    limit: float = field(init=False)
    in_flight: int = field(init=False, default=0)
    peak_limit: int = field(init=False, default=0)
    paused_until: float = field(init=False, default=0.0)
    refusals: int = field(init=False, default=0)
    #: (time, limit) at each change: how the limit converged
    history: list[tuple[float, int]] = field(init=False, default_factory=list)
    _slow_start: bool = field(init=False, default=True)
    _baseline: float = field(init=False, default=math.inf)
    _before_cut: float | None = field(init=False, default=None)  # mean latency before a cut
    _settling: bool = field(init=False, default=False)
    _starts_left: int | None = field(init=False, default=None)  # a rate window's requests
    _starts_until: float = field(init=False, default=0.0)
    _refused_in_row: int = field(init=False, default=0)  # refusals with no answer between
    _ceiling: float = field(init=False, default=math.inf)  # a load refused (inf: none yet)
    _probe_wait: int = field(init=False, default=0)
    _probing: bool = field(init=False, default=False)
    _probe_from: float = field(init=False, default=1.0)
    _windows_at_ceiling: int = field(init=False, default=0)
    _window: _Window = field(init=False)
    _waiters: deque[asyncio.Future[None]] = field(init=False, default_factory=deque)
    _timer: asyncio.TimerHandle | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        if not 1 <= self.minimum <= self.initial <= self.maximum:
            raise ValueError(
                f"need 1 <= minimum <= initial <= maximum, got "
                f"{self.minimum}, {self.initial}, {self.maximum}"
            )
        if not (0 < self.backoff < 1 and 0 < self.latency_backoff < 1):
            raise ValueError("backoff factors must be between 0 and 1")
        self.limit = float(self.initial)
        self._probe_wait = self.probe_windows
        self._window = _Window(self.clock())
        self._note()

    @property
    def current(self) -> int:
        """Requests the endpoint may have in flight now."""
        return int(self.limit)

    # -- taking and giving back a place ---------------------------------------------------

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one place for a request; its outcome (latency, refusals) adapts the limit."""
        await timed_wait(self._acquire())
        call = _Call(self)
        token = _CALL.set(call)
        started = self.clock()
        ok = False
        try:
            yield
            ok = True
        except Exception as exc:
            if not call.refused and _overloaded(exc):
                self.refused(getattr(exc, "retry_after", None))
            raise
        finally:
            _CALL.reset(token)
            sample = ok and not call.refused and not call.answered_here
            self._release(self.clock() - started if sample else None)

    async def _acquire(self) -> None:
        while not self._free():
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            self._arm_timer()
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                else:
                    self._wake()  # it was let go: pass its turn on
                raise
        self.in_flight += 1
        self._window.peak = max(self._window.peak, self.in_flight)
        if self._starts_left is not None and self.clock() < self._starts_until:
            self._starts_left -= 1
            if self._starts_left <= 0:  # the window's requests are spent: wait for its reset
                self.paused_until = max(self.paused_until, self._starts_until)

    def _free(self) -> bool:
        return self.in_flight < self.current and self.clock() >= self.paused_until

    def _release(self, latency: float | None) -> None:
        self.in_flight -= 1
        if latency is not None:
            self._finished(latency)
        self._wake()

    def _wake(self) -> None:
        """Let as many waiters go as there are places (the rest keep their turn)."""
        free = self.current - self.in_flight if self.clock() >= self.paused_until else 0
        for waiter in list(self._waiters)[: max(0, free)]:
            self._waiters.remove(waiter)
            if not waiter.done():
                waiter.set_result(None)
        self._arm_timer()

    def _arm_timer(self) -> None:
        """While paused with requests waiting, wake them when the pause ends."""
        if not self._waiters or self._timer is not None:
            return
        wait = self.paused_until - self.clock()
        if wait > 0:

            def fire() -> None:
                self._timer = None
                self._wake()

            self._timer = asyncio.get_running_loop().call_later(wait, fire)

    # -- what the endpoint says ------------------------------------------------------------

    def refused(self, retry_after: float | None = None) -> None:
        """A 429/503/timeout: back off (once per window); when more refusals than the limit
        came with no answer between them (the endpoint refuses everything now, not just the
        load past its limit), hold new requests as long as it asked."""
        self.refusals += 1
        self._refused_in_row += 1
        if self._refused_in_row > max(1, self.current):
            self.pause(retry_after)
        if self._window.refused:
            return
        self._window.refused = True
        self._slow_start = False
        cut = max(self.minimum, self.limit * self.backoff)
        if self._probing:
            # A probe past the load refused before failed: back to where it was, and wait
            # longer before the next one.
            self._probe_wait = min(self._probe_wait * 2, 1024)
            self._probing = False
            cut = max(cut, self._probe_from)
        self._ceiling = max(self.current, self.in_flight)  # the load it refused
        self._windows_at_ceiling = 0
        self._set(cut)

    def allow(self, requests_left: int, reset_s: float) -> None:
        """A rate window has ``requests_left`` more requests for ``reset_s`` seconds: start no
        more than that before it resets. Requests sent after the answered one may not be
        counted yet (counting them all as spent instead cost 7% of the throughput against the
        fake server's window); what that lets through past the window is refused and retried."""
        self._starts_left = max(0, requests_left)
        self._starts_until = self.clock() + min(reset_s, self.retry.max_retry_after)
        if self._starts_left == 0:
            self.paused_until = max(self.paused_until, self._starts_until)

    def pause(self, seconds: float | None) -> None:
        """Start no new request for ``seconds`` (capped by the retry policy's patience)."""
        if seconds is None or seconds <= 0:
            return
        until = self.clock() + min(seconds, self.retry.max_retry_after)
        self.paused_until = max(self.paused_until, until)

    # -- learning from finished requests ----------------------------------------------------

    def _finished(self, latency: float) -> None:
        self._refused_in_row = 0
        w = self._window
        w.done += 1
        w.latency_sum += latency
        # Slow start learns in one round of the limit; after it a window has enough requests
        # for its mean latency to mean something.
        size = self.current if self._slow_start else max(self.min_window, self.current)
        if w.done < size:
            return
        self._window = _Window(self.clock(), peak=self.in_flight)
        if self._settling:  # its requests started under the limit before the last change
            self._settling = False
            return
        self._adapt(w.latency_sum / w.done, w.peak >= self.current, w.refused)

    def _adapt(self, mean: float, used_all: bool, refused: bool) -> None:
        if refused:
            return
        if mean > self.latency_tolerance * self._baseline:
            if self._before_cut is not None and mean > 0.95 * self._before_cut:
                # Shrinking did not shorten it: not our queueing but a slower server (longer
                # answers), whose latency is the new normal.
                self._baseline, self._before_cut = mean, None
                return
            self._slow_start = False
            self._before_cut = mean
            self._set(max(self.minimum, self.limit * self.latency_backoff))
            return
        self._before_cut = None
        self._baseline = min(self._baseline, mean)
        if not used_all:
            return
        grown = self.limit * 2 if self._slow_start else self.limit + 1
        if int(grown) >= self._ceiling:
            self._windows_at_ceiling += 1
            if self._windows_at_ceiling < self._probe_wait:
                grown = max(self.limit, self._ceiling - 1.0)
            else:
                self._windows_at_ceiling = 0
                self._ceiling = math.inf  # probe: perhaps the endpoint takes more now
                self._probing, self._probe_from = True, self.limit
                grown = self.limit + 1
        self._set(min(float(self.maximum), grown))

    def _set(self, limit: float) -> None:
        before = self.current
        self.limit = limit
        if self.current != before:
            self._settling = True
            self._note()
            self._wake()

    def _note(self) -> None:
        self.peak_limit = max(self.peak_limit, self.current)
        self.history.append((self.clock(), self.current))
        if len(self.history) > 10_000:
            del self.history[: len(self.history) // 2]

    def summary(self) -> dict[str, Any]:
        """What the run's metadata says about it."""
        return {
            "limit": self.current,
            "peak_limit": self.peak_limit,
            "refusals": self.refusals,
            "changes": len(self.history) - 1,
        }


def _overloaded(exc: BaseException) -> bool:
    return (
        getattr(exc, "category", None) in OVERLOAD_CATEGORIES
        or getattr(exc, "status", None) in OVERLOAD_STATUSES
    )


def report_refusal(status: int | None, category: str | None, retry_after: float | None) -> None:
    """An attempt of the call in progress was refused (429, 503) or timed out: tell its limit."""
    call = _CALL.get()
    if call is None:
        return
    if status in OVERLOAD_STATUSES or category in OVERLOAD_CATEGORIES:
        call.refused = True
        call.limit.refused(retry_after)


def report_answered_here() -> None:
    """The call in progress was answered without a request (a response cache hit): its time
    says nothing about the endpoint."""
    call = _CALL.get()
    if call is not None:
        call.answered_here = True


def report_headers(headers: Mapping[str, str]) -> None:
    """An answer's rate-limit headers, told to the limit of the call in progress."""
    call = _CALL.get()
    if call is None:
        return
    said = read_rate_limit(headers)
    if said.requests_left is not None and said.reset_s is not None:
        call.limit.allow(said.requests_left, said.reset_s)
    if said.wait is not None:
        call.limit.pause(said.wait)


def check_max_concurrent(value: object, name: str = "max_concurrent") -> None:
    """None (no bound), an int >= 1, or ``"auto"`` (an adaptive limit per endpoint); a value
    of another kind is a TypeError, a number below 1 or another string a ValueError."""
    if value is None or value == AUTO and isinstance(value, str):
        return
    if isinstance(value, str):
        raise ValueError(f"{name} must be an int >= 1, None or 'auto', got {value!r}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, None or 'auto', got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
