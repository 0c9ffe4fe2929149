"""Aggregate metrics over output rows: the pass criterion and pass@k over scored rollouts."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from math import comb
from typing import Any

from verifiers_lite.core.records import Row


def scored_reward(row: Row) -> float | None:
    """A row's reward as a float; None when it has none (rollouts that failed before scoring)."""
    reward = row.get("reward")
    if reward is None or (isinstance(reward, float) and math.isnan(reward)):
        return None
    return float(reward)


def is_scored(row: Row) -> bool:
    """Whether a row carries a reward (rollouts that failed before scoring have none)."""
    return scored_reward(row) is not None


@dataclass(frozen=True)
class PassCriterion:
    """When a scored rollout counts as solved: ``metric`` (``"reward"`` or a reward function's
    metric name) >= ``threshold``."""

    metric: str = "reward"
    threshold: float = 1.0

    @classmethod
    def coerce(cls, value: PassCriterion | str | float | dict[str, Any] | None) -> PassCriterion:
        """None -> reward >= 1; a number -> reward >= it; a name -> that metric >= 1; a dict
        (as saved in run metadata) -> its fields."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            return cls(str(value.get("metric", "reward")), float(value.get("threshold", 1.0)))
        if isinstance(value, str):
            if not value:
                raise ValueError("pass_criterion: metric name must not be empty")
            return cls(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return cls("reward", float(value))
        raise ValueError(
            f"pass_criterion must be a reward threshold (number), a metric name or a PassCriterion, got {value!r}"
        )

    def passes(self, row: Mapping[str, Any]) -> bool:
        """Whether a scored row meets the criterion (a missing metric does not pass)."""
        value = (
            row.get("reward")
            if self.metric == "reward"
            else (row.get("metrics") or {}).get(self.metric)
        )
        if value is None:
            return False
        value = float(value)
        return not math.isnan(value) and value >= self.threshold

    def describe(self) -> str:
        return f"{self.metric} ≥ {self.threshold:g}"

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "threshold": self.threshold}


def pass_at_k(
    rows: Iterable[Row], k: int, threshold: float = 1.0, criterion: PassCriterion | None = None
) -> float:
    """Unbiased pass@k (Chen et al. 2021) averaged over examples.

    Only scored rows count (errored rollouts are left out, so n is an example's scored
    rollouts). A rollout passes when it meets ``criterion`` (default: reward >= ``threshold``).
    Examples with fewer than ``k`` scored rollouts are left out; NaN when none has ``k``.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return pass_at_k_from_counts(
        pass_counts(rows, criterion or PassCriterion("reward", threshold)), k
    )


def pass_counts(rows: Iterable[Row], criterion: PassCriterion) -> list[tuple[int, int]]:
    """(scored, passing) rollouts per example with a scored rollout, in one pass over the rows."""
    groups: dict[Any, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        if is_scored(r):
            acc = groups[r.get("example_id")]
            acc[0] += 1
            acc[1] += criterion.passes(r)
    return [(n, c) for n, c in groups.values()]


def pass_at_k_from_counts(counts: Iterable[tuple[int, int]], k: int) -> float:
    """The unbiased pass@k estimator averaged over examples given as (n scored, c passed);
    examples with n < k are left out, NaN when none is left."""
    scores = []
    for n, c in counts:
        if n < k:
            continue
        scores.append(1.0 - comb(n - c, k) / comb(n, k) if n - c >= k else 1.0)
    return sum(scores) / len(scores) if scores else float("nan")


def pass_at_k_curve(
    rows: Iterable[Row], threshold: float = 1.0, criterion: PassCriterion | None = None
) -> dict[int, float]:
    """pass@k for k = 1 .. the smallest number of scored rollouts of an example (one pass)."""
    return pass_at_k_curve_from_counts(
        pass_counts(rows, criterion or PassCriterion("reward", threshold))
    )


def pass_at_k_curve_from_counts(counts: list[tuple[int, int]]) -> dict[int, float]:
    """:func:`pass_at_k_curve` from (scored, passing) per example."""
    kmax = min((n for n, _ in counts), default=0)
    return {k: pass_at_k_from_counts(counts, k) for k in range(1, kmax + 1)}
