"""Sums and counts per example, added one value at a time, in a few bytes per example.

A clustered error bar (:mod:`verifiers_lite.stats.error_bars`) needs each example's sum and count. The
values of one example usually come together (a group), so they are kept as runs in flat arrays
rather than a dict entry per example: a million-rollout run holds a few MB, not tens. An example
whose values come in several runs (independent scoring, a resume) is summed when read.
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable

import numpy as np


class ClusterTotals:
    """Per-cluster (example) sum and count of the values added."""

    def __init__(self) -> None:
        # a list once a cluster is not a 64-bit int
        self._ids: array[int] | list[Hashable] = array("q")
        self._sums = array("d")
        self._counts = array("q")

    def add(self, cluster: Hashable, value: float = 0.0, count: int = 1) -> None:
        """Add ``value`` (``count`` values) to ``cluster``; ``count=0`` only makes it known."""
        if not self._ids or self._ids[-1] != cluster:
            if isinstance(self._ids, array) and not (
                type(cluster) is int and -(1 << 63) <= cluster < 1 << 63
            ):
                self._ids = list(self._ids)
            self._ids.append(cluster)  # type: ignore[arg-type]  # an int while the ids are an array
            self._sums.append(0.0)
            self._counts.append(0)
        self._sums[-1] += value
        self._counts[-1] += count

    def totals(self) -> dict[Hashable, tuple[float, int]]:
        """cluster -> (sum, count), in first-seen order."""
        ids, sums, counts = self.merged()
        return dict(
            zip(
                ids.tolist() if isinstance(ids, np.ndarray) else ids,
                zip(sums.tolist(), counts.tolist(), strict=True),
                strict=True,
            )
        )

    def sums_and_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Sums and counts of the clusters with at least one value (an estimator's input)."""
        _, sums, counts = self.merged()
        kept = counts > 0
        return sums[kept], counts[kept]

    def merged(self) -> tuple[np.ndarray | list[Hashable], np.ndarray, np.ndarray]:
        """Clusters in first-seen order with their sums and counts, the runs of one cluster added
        up (in the order they came), as arrays: a few bytes per cluster, no dict."""
        sums, counts = (
            np.array(self._sums, dtype=np.float64),
            np.array(self._counts, dtype=np.int64),
        )
        if not isinstance(self._ids, array):
            merged: dict[Hashable, tuple[float, int]] = {}
            for cluster, s, n in zip(self._ids, sums.tolist(), counts.tolist(), strict=True):
                seen = merged.get(cluster)
                merged[cluster] = (s, n) if seen is None else (seen[0] + s, seen[1] + n)
            return (
                list(merged),
                np.array([v[0] for v in merged.values()], dtype=np.float64),
                np.array([v[1] for v in merged.values()], dtype=np.int64),
            )
        ids = np.array(self._ids, dtype=np.int64)
        unique, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        if len(unique) == len(ids):  # each cluster in one run
            return ids, sums, counts
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        at = rank[inverse.reshape(-1)]
        merged_sums = np.zeros(len(order), dtype=np.float64)
        np.add.at(merged_sums, at, sums)  # in the order the runs came, as a running sum would
        return (
            unique[order],
            merged_sums,
            np.bincount(at, weights=counts, minlength=len(order)).astype(np.int64),
        )


def values_for(ids: np.ndarray | list[Hashable], totals: ClusterTotals) -> np.ndarray:
    """``totals``' sum for each cluster of ``ids`` (0 for a cluster it does not hold)."""
    own_ids, sums, _ = totals.merged()
    if isinstance(ids, np.ndarray) and isinstance(own_ids, np.ndarray):
        if not len(own_ids):
            return np.zeros(len(ids))
        order = np.argsort(own_ids)
        at = np.minimum(np.searchsorted(own_ids, ids, sorter=order), len(order) - 1)
        found = own_ids[order[at]] == ids
        return np.where(found, sums[order[at]], 0.0)
    lookup = dict(
        zip(
            own_ids.tolist() if isinstance(own_ids, np.ndarray) else own_ids,
            sums.tolist(),
            strict=True,
        )
    )
    return np.array(
        [lookup.get(c, 0.0) for c in (ids.tolist() if isinstance(ids, np.ndarray) else ids)]
    )
