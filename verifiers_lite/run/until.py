"""Stopping a run once its mean reward is known well enough: ``until=vf.Precision(...)``.

The run draws its examples in order (``evaluate`` shuffles them with its seed when ``until`` is
given), runs as many at once as its concurrency allows, and starts no new example once the
anytime-valid interval of the mean reward (:class:`~verifiers_lite.stats.confidence_sequence.
BettingCS`, examples as the independent draws, each one's mean reward over its scored rollouts)
is narrower than asked — or, against a ``baseline`` run, once the interval of the paired
difference excludes 0 or is narrower than asked. Examples are fed to the interval in their
draw order, each when it and every example drawn before it have finished, so which examples
count never depends on which finished first. Rollouts already in flight finish and are kept.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verifiers_lite.core.records import Row
from verifiers_lite.results.metrics import scored_reward

__all__ = ["Precision", "UntilGate"]


@dataclass(frozen=True, kw_only=True)
class Precision:
    """Run until the ``confidence`` interval of the mean reward has at most ``half_width`` on
    each side (or the examples run out). ``reward_range`` is the range every reward lies in
    (the interval's validity rests on it; a reward outside is an error). With ``baseline`` (a
    finished run's outputs or rows, paired by ``example_id``) the interval is of this run's mean
    reward minus the baseline's over the examples both have, and with ``stop_on_sign`` the run
    also stops once that interval excludes 0."""

    half_width: float  #: the interval's half width to reach (> 0)
    confidence: float = 0.95  #: the interval's confidence, in (0, 1)
    reward_range: tuple[float, float] = (0.0, 1.0)  #: (low, high): the range every reward lies in
    baseline: Any = None  #: a finished run's outputs or rows to compare against, paired by example
    stop_on_sign: bool = True  #: with ``baseline``, also stop once the difference's sign is settled

    def __post_init__(self) -> None:
        if not (isinstance(self.half_width, (int, float)) and 0 < self.half_width < math.inf):
            raise ValueError(f"Precision.half_width must be > 0, got {self.half_width!r}")
        if not 0 < self.confidence < 1:
            raise ValueError(f"Precision.confidence must be in (0, 1), got {self.confidence!r}")
        lo, hi = self.reward_range
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"Precision.reward_range must be (low, high), got {self.reward_range}")

    def baseline_means(self) -> dict[Any, float] | None:
        """The baseline's mean reward per example (scored rollouts only), or None."""
        if self.baseline is None:
            return None
        rows = getattr(self.baseline, "rows", self.baseline)
        return _example_means(rows)


def _example_means(rows: Iterable[Row]) -> dict[Any, float]:
    sums: dict[Any, list[float]] = {}
    for row in rows:
        reward = scored_reward(row)
        if reward is not None:
            acc = sums.setdefault(row.get("example_id"), [0.0, 0])
            acc[0] += reward
            acc[1] += 1
    return {eid: s / n for eid, (s, n) in sums.items()}


class UntilGate:
    """Feeds finished examples to the confidence sequence in draw order and stops the supply
    of new units once the rule is met."""

    def __init__(self, rule: Precision, order: Sequence[Any], sizes: Mapping[Any, int]) -> None:
        from verifiers_lite.stats.confidence_sequence import BettingCS  # numpy: when asked

        self.rule, self.order, self.sizes = rule, list(order), sizes
        self.base = rule.baseline_means()
        lo, hi = rule.reward_range
        span = hi - lo
        bounds = (-span, span) if self.base is not None else (lo, hi)
        self.cs = BettingCS(1 - rule.confidence, *bounds)
        self._seen: dict[Any, list[float]] = {}  # eid -> [reward sum, scored, rows]
        self._next = 0  # position in ``order`` of the next example to feed
        self.fed = 0
        self.stopped: str | None = None

    def add(self, rows: Iterable[Row]) -> None:
        """Finished rows (of this session or saved by an earlier one)."""
        for row in rows:
            acc = self._seen.setdefault(row.get("example_id"), [0.0, 0, 0])
            reward = scored_reward(row)
            if reward is not None:
                acc[0] += reward
                acc[1] += 1
            acc[2] += 1
        self._feed()

    def _feed(self) -> None:
        while self._next < len(self.order) and self.stopped is None:
            eid = self.order[self._next]
            acc = self._seen.get(eid)
            if acc is None or acc[2] < self.sizes.get(eid, 1):
                return
            self._next += 1
            value = self._value(eid, acc)
            if value is None:
                continue  # no scored rollout (or not in the baseline): carries no information
            self.cs.update([value])
            self.fed += 1
            self.stopped = self._met()

    def _value(self, eid: Any, acc: list[float]) -> float | None:
        if not acc[1]:
            return None
        mean = acc[0] / acc[1]
        if self.base is None:
            return mean
        base = self.base.get(eid)
        return None if base is None else mean - base

    def _met(self) -> str | None:
        low, high = self.cs.interval()
        if (high - low) / 2 <= self.rule.half_width:
            return "precision"
        if self.base is not None and self.rule.stop_on_sign and (low > 0 or high < 0):
            return "sign"
        return None

    def units(self, units: Iterator[Any]) -> Iterator[Any]:
        """``units`` until the rule is met."""
        for unit in units:
            if self.stopped is not None:
                return
            yield unit

    def record(self) -> dict[str, Any]:
        """What the run's metadata keeps (``until``)."""
        low, high = self.cs.interval()
        mean = float(self.cs.mean[0]) if self.fed else None
        return {
            "rule": "precision" if self.base is None else "paired precision",
            "half_width": self.rule.half_width,
            "confidence": self.rule.confidence,
            "reward_range": list(self.rule.reward_range),
            "examples": self.fed,
            "mean": mean,
            "interval": [low, high] if self.fed else None,
            "stopped": self.stopped or "examples ran out",
        }
