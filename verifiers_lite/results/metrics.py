"""Aggregate metrics over output rows: pass@k."""

from __future__ import annotations

from collections import defaultdict
from math import comb
from typing import Any


def pass_at_k(rows: list[dict[str, Any]], k: int, threshold: float = 1.0) -> float:
    """Unbiased pass@k (Chen et al. 2021) averaged over examples.

    A rollout passes when its reward is >= ``threshold``. Examples with fewer than ``k``
    rollouts are left out; NaN when none has ``k``.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    groups: dict[Any, list[float]] = defaultdict(list)
    for r in rows:
        groups[r.get("example_id")].append(float(r.get("reward") or 0.0))
    scores = []
    for rewards in groups.values():
        n = len(rewards)
        if n < k:
            continue
        c = sum(1 for x in rewards if x >= threshold)
        scores.append(1.0 - comb(n - c, k) / comb(n, k) if n - c >= k else 1.0)
    return sum(scores) / len(scores) if scores else float("nan")


def pass_at_k_curve(rows: list[dict[str, Any]], threshold: float = 1.0) -> dict[int, float]:
    """pass@k for k = 1 .. the smallest group size."""
    sizes: dict[Any, int] = defaultdict(int)
    for r in rows:
        sizes[r.get("example_id")] += 1
    kmax = min(sizes.values(), default=0)
    return {k: pass_at_k(rows, k, threshold) for k in range(1, kmax + 1)}
