"""Per-example sums and counts kept as flat arrays agree with a dict computed by hand, for
examples whose values come in one run, in several (a resume, independent scoring), and for
ids that are not 64-bit integers."""

from __future__ import annotations

import random

import pytest

from verifiers_lite.stats.cluster_totals import ClusterTotals


@pytest.mark.parametrize(
    "ids",
    [
        [0, 0, 1, 1, 2, 2],  # one run each
        [3, 3, 1, 3, 2, 1, 1, 3],  # several runs, first-seen order 3, 1, 2
        [7, "a", 7, 2**70, "a"],  # not all 64-bit integers
        [],
    ],
)
def test_totals_agree_with_a_dict(ids: list) -> None:
    rng = random.Random(len(ids))
    totals, by_hand = ClusterTotals(), {}
    for cluster in ids:
        value, count = rng.random(), rng.choice([0, 1, 1])
        totals.add(cluster, value * count, count)
        s, n = by_hand.get(cluster, (0.0, 0))
        by_hand[cluster] = (s + value * count, n + count)
    got = totals.totals()
    assert list(got) == list(by_hand)
    assert [n for _, n in got.values()] == [n for _, n in by_hand.values()]
    assert [s for s, _ in got.values()] == pytest.approx([s for s, _ in by_hand.values()])
    sums, counts = totals.sums_and_counts()
    kept = [(s, n) for s, n in by_hand.values() if n]
    assert sums.tolist() == pytest.approx([s for s, _ in kept]) and counts.tolist() == [
        n for _, n in kept
    ]
