"""Sums and counts per example, added one value at a time, in a few bytes per example.

A clustered error bar (:mod:`verifiers_lite.stats`) needs each example's sum and count. The
values of one example usually come together (a group), so they are kept as runs in flat arrays
rather than a dict entry per example: a million-rollout run holds a few MB, not tens. An example
whose values come in several runs (independent scoring, a resume) is summed when read.
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable


class ClusterTotals:
    """Per-cluster (example) sum and count of the values added."""

    def __init__(self) -> None:
        self._ids: list[Hashable] = []
        self._sums = array("d")
        self._counts = array("q")

    def add(self, cluster: Hashable, value: float = 0.0, count: int = 1) -> None:
        """Add ``value`` (``count`` values) to ``cluster``; ``count=0`` only makes it known."""
        if not self._ids or self._ids[-1] != cluster:
            self._ids.append(cluster)
            self._sums.append(0.0)
            self._counts.append(0)
        self._sums[-1] += value
        self._counts[-1] += count

    def totals(self) -> dict[Hashable, tuple[float, int]]:
        """cluster -> (sum, count), in first-seen order."""
        out: dict[Hashable, tuple[float, int]] = {}
        for cluster, s, n in zip(self._ids, self._sums, self._counts, strict=True):
            seen = out.get(cluster)
            out[cluster] = (s, n) if seen is None else (seen[0] + s, seen[1] + n)
        return out

    def sums_and_counts(self) -> tuple[list[float], list[int]]:
        """Sums and counts of the clusters with at least one value (an estimator's input)."""
        per = [(s, n) for s, n in self.totals().values() if n]
        return [s for s, _ in per], [n for _, n in per]
