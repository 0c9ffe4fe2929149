"""pass@k over scored rollouts (the pass criterion itself is :mod:`verifiers_lite.core.pass_criterion`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from math import comb
from typing import Any

from verifiers_lite.core.pass_criterion import PassCriterion, is_scored, scored_reward
from verifiers_lite.core.records import Row

__all__ = [
    "PassCriterion",
    "is_scored",
    "pass_at_k",
    "pass_at_k_curve",
    "pass_at_k_curve_from_counts",
    "pass_at_k_from_counts",
    "pass_counts",
    "scored_reward",
]


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
