"""Run budgets: ``max_cost_usd``, ``max_tokens_total`` and ``max_wall_s`` of a run.

A run with a budget starts no new unit (a group, or one rollout) once starting it would take the
run past a budget: what is spent (every row counted, those an earlier session saved too), plus
what the units in flight and this one are expected to spend at the mean per rollout so far
(cost, tokens) or take (a rollout's mean time, for the wall clock). Units in flight finish and
are kept, so a run may end a little past a budget, never by more than what was in flight. With
a cost or token budget and nothing finished yet (nothing to project from), the first unit runs
alone (:meth:`BudgetGate.ready`). The wall clock counts this session and the earlier ones of
the same run (their recorded durations).

The run's metadata records the budget, what was spent and, when it stopped the run, why:
``"stopped": "budget (cost 4.98 of 5.00 USD)"``. A resume with a larger budget goes on where it
stopped (the saved rows count as spent).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["BudgetGate", "RunBudget", "check_budget"]


class _Unit(Protocol):
    inputs: list[Any]


_KINDS: dict[str, tuple[type, ...]] = {
    "max_cost_usd": (int, float),
    "max_tokens_total": (int,),
    "max_wall_s": (int, float),
}


def check_budget(name: str, value: object) -> None:
    """None, or a positive finite number (an int for ``max_tokens_total``)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, _KINDS[name]):
        what = "an int" if name == "max_tokens_total" else "a number"
        raise TypeError(f"RunConfig.{name} must be {what} or None, got {value!r}")
    number = float(value)  # type: ignore[arg-type]  # an int or float, checked above
    if not (number > 0 and math.isfinite(number)):
        raise ValueError(f"RunConfig.{name} must be a positive number, got {value!r}")


@dataclass(frozen=True, slots=True)
class RunBudget:
    """The three budgets of a run (None: none)."""

    max_cost_usd: float | None = None
    max_tokens_total: int | None = None
    max_wall_s: float | None = None

    def __post_init__(self) -> None:
        for name in _KINDS:
            check_budget(name, getattr(self, name))

    def __bool__(self) -> bool:
        return any(
            v is not None for v in (self.max_cost_usd, self.max_tokens_total, self.max_wall_s)
        )


def row_tokens(row: Mapping[str, Any]) -> int:
    """A row's prompt and completion tokens (reasoning is part of completion)."""
    usage = row.get("usage")
    if not isinstance(usage, Mapping):
        return 0
    return sum(
        int(v)
        for v in (usage.get("prompt_tokens"), usage.get("completion_tokens"))
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    )


def _over(spent: float, finished: int, ahead: int, limit: float) -> bool:
    """Whether ``spent`` so far over ``finished`` rollouts, plus ``ahead`` more at its mean,
    passes ``limit`` (or ``spent`` already reaches it)."""
    projected = spent + (ahead * spent / finished if finished else 0.0)
    return spent >= limit or projected > limit


class BudgetGate:
    """Counts what finished rows spent and stops the supply of new units before a budget would
    be exceeded (see the module). ``earlier_wall_s``: the run's earlier sessions' time."""

    def __init__(
        self,
        budget: RunBudget,
        *,
        earlier_wall_s: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.budget, self.clock = budget, clock
        self.earlier_wall_s = earlier_wall_s
        self.started_at = clock()
        self.cost_usd = 0.0
        self.tokens = 0
        self.rollouts = 0  # finished rows counted
        self.rollout_s = 0.0  # their summed time (rows that record it)
        self.timed = 0
        self.in_flight = 0  # rollouts handed out and not yet back
        self.stopped: str | None = None  # which budget stopped the run: cost, tokens, wall
        self._learned: asyncio.Event | None = None  # set once a rollout has finished

    def add(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Finished rows (of this session, or saved by an earlier one)."""
        n = 0
        for row in rows:
            n += 1
            cost = row.get("cost_usd")
            if isinstance(cost, (int, float)) and math.isfinite(cost):
                self.cost_usd += float(cost)
            self.tokens += row_tokens(row)
            timing = row.get("timing")
            total_ms = timing.get("total_ms") if isinstance(timing, Mapping) else None
            if isinstance(total_ms, (int, float)) and math.isfinite(total_ms):
                self.rollout_s += total_ms / 1000
                self.timed += 1
        self.rollouts += n
        self.in_flight = max(0, self.in_flight - n)
        if self.rollouts and self._learned is not None:
            self._learned.set()

    async def ready(self) -> None:
        """Wait, before taking a unit, while a cost or token budget has nothing to project
        from (no rollout finished) and a unit is already in flight: the first unit runs alone,
        so a run's first wave cannot spend its whole concurrency's worth unseen."""
        b = self.budget
        if b.max_cost_usd is None and b.max_tokens_total is None:
            return
        while not self.rollouts and self.in_flight:
            if self._learned is None:
                self._learned = asyncio.Event()
            await self._learned.wait()

    @property
    def wall_s(self) -> float:
        """The run's time so far: earlier sessions' and this one's."""
        return self.earlier_wall_s + self.clock() - self.started_at

    def exceeded_by(self, rollouts: int) -> str | None:
        """The budget that starting ``rollouts`` more would exceed (``cost``, ``tokens``,
        ``wall``), or None. Before any rollout has finished nothing is projected (the run
        takes one unit alone then: :meth:`ready`)."""
        b, ahead, n = self.budget, self.in_flight + rollouts, self.rollouts
        if b.max_cost_usd is not None and _over(self.cost_usd, n, ahead, b.max_cost_usd):
            return "cost"
        if b.max_tokens_total is not None and _over(self.tokens, n, ahead, b.max_tokens_total):
            return "tokens"
        if b.max_wall_s is not None:
            mean_s = self.rollout_s / self.timed if self.timed else 0.0
            if self.wall_s + mean_s > b.max_wall_s:
                return "wall"
        return None

    def units(self, units: Iterator[Any]) -> Iterator[Any]:
        """``units`` while none would take the run past a budget."""
        for unit in units:
            if self.stopped is None:
                self.stopped = self.exceeded_by(len(unit.inputs))
            if self.stopped is not None:
                return
            self.in_flight += len(unit.inputs)
            yield unit

    def message(self) -> str | None:
        """``budget (cost 4.98 of 5.00 USD)`` when a budget stopped the run, else None."""
        b = self.budget
        if self.stopped == "cost":
            return f"budget (cost {self.cost_usd:.2f} of {b.max_cost_usd:.2f} USD)"
        if self.stopped == "tokens":
            return f"budget (tokens {self.tokens:,} of {b.max_tokens_total:,})"
        if self.stopped == "wall":
            return f"budget (wall time {self.wall_s:.1f} of {b.max_wall_s:g} s)"
        return None

    def record(self) -> dict[str, Any]:
        """What the run's metadata keeps (``budget``)."""
        b = self.budget
        return {
            "max_cost_usd": b.max_cost_usd,
            "max_tokens_total": b.max_tokens_total,
            "max_wall_s": b.max_wall_s,
            "spent": {
                "cost_usd": self.cost_usd,
                "tokens": self.tokens,
                "wall_s": self.wall_s,
            },
            "stopped": self.message(),
        }
