"""Live run statistics and the callback interface that progress displays consume."""

from __future__ import annotations

import contextvars
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from verifiers_lite.core.records import TIMING_PARTS, Row
from verifiers_lite.core.summary import RunSummary

if TYPE_CHECKING:
    from verifiers_lite.stats.error_bars import Estimate

T = TypeVar("T")

TICK_SECONDS = 1.0  # how often displays redraw the clock (elapsed, ETA, rate) between events
EVENT_SECONDS = 0.05  # rollout start/end events reach the displays at most this often
# A share of rollouts stopped at the token limit at or above which the summary warns.
LENGTH_WARN_SHARE = 0.1


@dataclass
class RunStats:
    """Live figures of a run: its :class:`~verifiers_lite.core.summary.RunSummary` (the figures
    the run's final summary is, fed each recorded row) and what only a live display needs.
    ``done`` counts recorded rows (a group is recorded once scored); ``finished`` also counts
    rollouts whose trajectory ended while their group is still running, and ``in_flight`` those
    running now. Reward figures are over the scored rollouts (``scored``); errored rollouts have
    no reward and count in ``errors``."""

    total: int  #: rollouts the run will have when done (resumed ones included)
    #: the figures of the recorded rows, the run's final summary once every row is in
    summary: RunSummary = field(default_factory=RunSummary)
    resumed: int = 0  #: rows kept from an earlier session of the run (not run again)
    #: when the run started (``time.monotonic()``): elapsed time, rate and ETA count from it
    started: float = field(default_factory=time.monotonic)
    #: the last rewards recorded (up to 2000), for a live histogram
    recent_rewards: list[float] = field(default_factory=list)
    cache_hits: int | None = None  #: model calls the response cache answered; None: no cache
    cache_misses: int = 0  #: model calls the response cache did not have
    in_flight: int = 0  #: rollouts running now
    #: ``(example_id, rollout_index)`` of rollouts that ended while their group is still running
    awaiting: set[tuple[Any, int]] = field(default_factory=set)
    #: the run's adaptive bound on model requests in flight now (``max_concurrent="auto"``),
    #: read when a display draws; None: a fixed bound
    limit_source: Callable[[], int | None] | None = None

    @property
    def in_flight_limit(self) -> int | None:
        """The adaptive bound on requests in flight now, None when the run's bound is fixed."""
        return self.limit_source() if self.limit_source is not None else None

    def rollout_started(self) -> None:
        self.in_flight += 1

    def rollout_ended(self, key: tuple[Any, int]) -> None:
        """A trajectory ended (``key`` = (example_id, rollout_index)); its row comes with its group."""
        self.in_flight = max(0, self.in_flight - 1)
        self.awaiting.add(key)

    @property
    def finished(self) -> int:
        """Rollouts whose trajectory has ended: recorded rows plus those awaiting group scoring."""
        return min(self.total, self.done + len(self.awaiting))

    def add(self, rows: list[Row], resumed: bool = False) -> None:
        """Recorded rows (``resumed``: kept from an earlier session), counted in the summary."""
        awaiting, recent, add = self.awaiting, self.recent_rewards, self.summary.add
        for r in rows:
            if awaiting:
                awaiting.discard((r.get("example_id"), r.get("rollout_index", 0)))
            reward = add(r)
            if reward is not None:
                recent.append(reward)
        del recent[:-2000]  # a bounded window for live histograms
        if resumed:
            self.resumed += len(rows)

    @property
    def done(self) -> int:
        return self.summary.num_rollouts

    @property
    def scored(self) -> int:
        return self.summary.num_scored

    @property
    def errors(self) -> Counter[str]:
        return self.summary.errors

    @property
    def stop_reasons(self) -> Counter[str]:
        return self.summary.stop_reasons

    @property
    def mean_reward(self) -> float:
        return self.summary.mean_reward

    @property
    def reward_estimate(self) -> Estimate:
        """Mean reward so far with its standard error clustered by example and 95% interval."""
        return self.summary.reward_estimate()

    @property
    def stderr(self) -> float:
        """Standard error of the mean reward, clustered by example (NaN below two examples)."""
        return self.reward_estimate.stderr

    def reward_text(self) -> str:
        """``0.600 ± 0.135 (95% CI [0.295, 0.905])``, or ``—`` before the first score."""
        from verifiers_lite.stats.error_bars import format_estimate

        if not self.scored:
            return "—"
        e = self.reward_estimate
        return format_estimate(e.mean, e.stderr, e.ci)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def rate(self) -> float:
        """Rollouts finished per second in this session (resumed rows excluded)."""
        fresh = self.finished - self.resumed
        return fresh / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        remaining = self.total - self.finished
        return remaining / self.rate if self.rate > 0 else None

    def length_warning(self) -> str | None:
        """A one-line warning when many rollouts stopped at the token limit, else None."""
        return length_warning(self.stop_reasons, self.done)

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


def length_warning(
    stop_reasons: Any, total: int, remedy: str = "raise max_tokens in sampling_args"
) -> str | None:
    """Warn, naming ``max_tokens``, when at least ``LENGTH_WARN_SHARE`` of rollouts ended ``length``."""
    n = int((stop_reasons or {}).get("length", 0))
    if not total or n / total < LENGTH_WARN_SHARE:
        return None
    return (
        f"{n} of {total} rollouts ({100 * n / total:.0f}%) stopped at the token limit "
        f"(stop_reason 'length'): {remedy}, or ask for shorter answers"
    )


def format_stop_reasons(stop_reasons: Any) -> str:
    """``stop 20, length 12`` (most common first); ``—`` when there are none."""
    items = sorted((stop_reasons or {}).items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{k} {v}" for k, v in items) or "—"


def format_timing(timing_ms: Any) -> str:
    """Where a rollout's time went, mean per rollout, each part named: ``waiting for a request
    slot 1,204 ms · in the model request 212 ms · in the environment 3 ms · waiting for its
    group 0 ms · scoring 0 ms``; ``—`` when no row recorded its timing."""
    parts = [
        f"{label} {timing_ms[key]:,.0f} ms"
        for key, label in TIMING_PARTS
        if key in (timing_ms or {})
    ]
    return " · ".join(parts) or "—"


# The run a rollout belongs to, so the environment can report each rollout's start and end as
# it happens (the scheduler sets it; tasks inherit it). Unset outside generate().
_CURRENT_RUN: contextvars.ContextVar[Callable[[str, tuple[Any, int]], None] | None] = (
    contextvars.ContextVar("verifiers_lite_current_run", default=None)
)


def set_rollout_listener(
    listener: Callable[[str, tuple[Any, int]], None] | None,
) -> contextvars.Token[Any]:
    """Route ``("start"|"end", (example_id, rollout_index))`` events of this context to ``listener``."""
    return _CURRENT_RUN.set(listener)


def reset_rollout_listener(token: contextvars.Token[Any]) -> None:
    """Undo :func:`set_rollout_listener` (same context)."""
    _CURRENT_RUN.reset(token)


async def track_rollout(work: Awaitable[T], key: tuple[Any, int]) -> T:
    """Await one rollout, telling the current run (if any) when it starts and ends
    (``cancel`` when it was interrupted rather than finished)."""
    listener = _CURRENT_RUN.get()
    if listener is None:
        return await work
    listener("start", key)
    try:
        result = await work
    except BaseException:
        listener("cancel", key)
        raise
    listener("end", key)
    return result


def rollout_listener(
    stats: RunStats, on_update: Callable[[RunStats], None]
) -> Callable[[str, tuple[Any, int]], None]:
    """The listener generate() installs: keeps ``stats`` current and tells the displays, at
    most every ``EVENT_SECONDS`` (hundreds of rollouts a second would otherwise cost a display
    call each; the clock tick shows what was skipped)."""
    last = 0.0

    def listen(kind: str, key: tuple[Any, int]) -> None:
        nonlocal last
        if kind == "start":
            stats.rollout_started()
        elif kind == "end":
            stats.rollout_ended(key)
        else:
            stats.in_flight = max(0, stats.in_flight - 1)
        now = time.monotonic()
        if now - last >= EVENT_SECONDS:
            last = now
            on_update(stats)

    return listen


class ProgressCallback(Protocol):
    """What a progress display implements; every method is optional in practice.

    ``on_progress`` comes once per recorded group (with its rows); ``on_update`` whenever a
    rollout starts or ends and on a clock tick (about once a second), for live counts and timers.
    """

    def on_start(self, stats: RunStats) -> None: ...
    def on_progress(self, stats: RunStats, rows: list[Row]) -> None: ...
    def on_update(self, stats: RunStats) -> None: ...
    def on_log(self, message: str) -> None: ...
    def on_end(self, stats: RunStats) -> None: ...


# Displays offered by the layers above (the package root registers the notebook widget, then the
# terminal bar): the core never imports the UI. Each factory returns a display, or None where it
# does not apply (a widget outside a kernel).
_DISPLAY_FACTORIES: list[Callable[[str], ProgressCallback | None]] = []


def register_display(factory: Callable[[str], ProgressCallback | None]) -> None:
    """Offer a display to :func:`default_progress` (tried in the order registered)."""
    if factory not in _DISPLAY_FACTORIES:
        _DISPLAY_FACTORIES.append(factory)


def default_progress(desc: str = "rollouts") -> ProgressCallback:
    """The display for where we run: the first registered display that applies (the live widget
    in Jupyter, else the terminal bar); none (a silent run) where nothing is registered."""
    for factory in _DISPLAY_FACTORIES:
        display = factory(desc)
        if display is not None:
            return display
    return CallbackSet([])


class CallbackSet:
    """Fans events out to several callbacks; a failing callback is reported, never fatal."""

    def __init__(self, callbacks: list[Any]) -> None:
        self.callbacks = callbacks

    def _emit(self, method: str, *args: Any) -> None:
        for cb in self.callbacks:
            fn = getattr(cb, method, None)
            if fn is None:
                continue
            try:
                fn(*args)
            except Exception as exc:  # a broken display must not take the run down
                if method != "on_log":
                    self._emit(
                        "on_log", f"progress callback {type(cb).__name__}.{method} failed: {exc!r}"
                    )

    def on_start(self, stats: RunStats) -> None:
        self._emit("on_start", stats)

    def on_progress(self, stats: RunStats, rows: list[Row]) -> None:
        self._emit("on_progress", stats, rows)

    def on_update(self, stats: RunStats) -> None:
        self._emit("on_update", stats)

    def on_log(self, message: str) -> None:
        self._emit("on_log", message)

    def on_end(self, stats: RunStats) -> None:
        self._emit("on_end", stats)


class FunctionCallbacks:
    """Adapts plain ``on_start``/``on_progress``/``on_log`` functions to the callback interface."""

    def __init__(self, on_start: Any = None, on_progress: Any = None, on_log: Any = None) -> None:
        if on_start is not None:
            self.on_start = on_start
        if on_progress is not None:
            self.on_progress = on_progress
        if on_log is not None:
            self.on_log = on_log
