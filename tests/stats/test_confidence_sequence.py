"""The betting confidence sequence, checked by simulation against a known truth: runs that stop
as soon as the interval is narrow enough must still cover the true mean in >= 95% of runs
(rewards clustered by example: each example has its own success rate, 4 rollouts each), for
0/1 rewards and for bounded continuous ones; the ordinary interval, peeked at the same way,
does not. The full 1,000-run study is benchmarks/anytime_precision.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verifiers_lite.stats.confidence_sequence import BettingCS, cs_interval

RUNS = 200
ROLLOUTS = 4
HALF_WIDTH = 0.1


def _bernoulli_examples(rng: np.random.Generator, runs: int) -> np.ndarray:
    """Per run, one new example's mean over 4 rollouts: its rate 0.9 or 0.2 (half each)."""
    rates = np.where(rng.random(runs) < 0.5, 0.9, 0.2)
    return rng.binomial(ROLLOUTS, rates) / ROLLOUTS


BERNOULLI_TRUTH = (0.9 + 0.2) / 2


def _beta_examples(rng: np.random.Generator, runs: int) -> np.ndarray:
    """Continuous rewards in [0, 1]: an example's mean level from Beta(2, 5) (mean 2/7), its
    rollouts Beta around it (concentration 6)."""
    level = rng.beta(2.0, 5.0, runs)
    draws = rng.beta(level[:, None] * 6 + 1e-9, (1 - level[:, None]) * 6 + 1e-9, (runs, ROLLOUTS))
    return draws.mean(axis=1)


BETA_TRUTH = 2 / 7


def _stop_when_narrow(sample, truth: float, seed: int) -> tuple[float, float, float]:
    """(coverage at the stopping time, mean examples used, naive peeking coverage)."""
    rng = np.random.default_rng(seed)
    cs = BettingCS(0.05, runs=RUNS, target_half_width=HALF_WIDTH)
    stopped = np.zeros(RUNS, dtype=bool)
    covered = np.zeros(RUNS, dtype=bool)
    used = np.zeros(RUNS)
    # The ordinary interval (mean ± 1.96 standard errors of the example means), peeked at after
    # every example from the 10th on, stopping once narrow: what the sequence replaces.
    n, s, s2 = np.zeros(RUNS), np.zeros(RUNS), np.zeros(RUNS)
    naive_done = np.zeros(RUNS, dtype=bool)
    naive_cover = np.zeros(RUNS, dtype=bool)
    for step in range(1, 5000):
        x = sample(rng, RUNS)
        cs.update(np.where(stopped, np.nan, x))
        now = ~stopped & (cs.half_width <= HALF_WIDTH)
        covered[now] = (cs.low[now] <= truth) & (truth <= cs.high[now])
        used[now] = step
        stopped |= now
        n, s, s2 = n + 1, s + x, s2 + x * x
        sd = np.sqrt(np.maximum(s2 / n - (s / n) ** 2, 0) * n / np.maximum(n - 1, 1))
        half = 1.96 * sd / np.sqrt(n)
        peek = ~naive_done & (n >= 10) & (half <= HALF_WIDTH)
        naive_cover[peek] = np.abs(s[peek] / n[peek] - truth) <= half[peek]
        naive_done |= peek
        if stopped.all() and naive_done.all():
            break
    assert stopped.all()
    return covered.mean(), used.mean(), naive_cover.mean()


@pytest.mark.parametrize(
    ("sample", "truth"),
    [(_bernoulli_examples, BERNOULLI_TRUTH), (_beta_examples, BETA_TRUTH)],
    ids=["bernoulli", "beta"],
)
def test_stopping_when_narrow_still_covers_the_truth(sample, truth):
    coverage, used, naive = _stop_when_narrow(sample, truth, seed=7)
    print(
        f"coverage {coverage:.3f} after {used:.0f} examples; peeked ordinary interval {naive:.3f}"
    )
    assert coverage >= 0.95
    assert naive < coverage  # the simulation can tell a valid rule from an invalid one


def test_peeking_at_the_ordinary_interval_undercovers_where_the_sequence_does_not():
    # A small half-width on a low-variance mixture: the ordinary interval is narrow early by
    # chance; stopping then misses the truth far more than 5% of the time.
    coverage, _, naive = _stop_when_narrow(_bernoulli_examples, BERNOULLI_TRUTH, seed=11)
    assert naive < 0.93 < coverage


def test_the_interval_shrinks_around_the_mean_and_holds_the_truth_throughout():
    rng = np.random.default_rng(3)
    values = rng.binomial(1, 0.3, 4000).astype(float)
    cs = BettingCS(0.05, target_half_width=0.02)
    widths = []
    for v in values:
        cs.update([v])
        low, high = cs.interval()
        assert low <= 0.3 <= high
        widths.append(high - low)
    assert all(b <= a for a, b in zip(widths, widths[1:], strict=False))  # intersected: never wider
    # 1.2 times the ordinary interval's 2 * 1.96 * sqrt(0.21 / 4000) = 0.028 at 4,000 draws
    assert widths[-1] < 0.035
    assert cs.interval()[0] <= values.mean() <= cs.interval()[1]


def test_bounds_other_than_zero_one_scale_the_interval():
    rng = np.random.default_rng(5)
    values = rng.uniform(0, 1, 300)
    low, high = cs_interval(list(values))
    low10, high10 = cs_interval(list(values * 10 - 5), lo=-5, hi=5)
    assert (low10, high10) == pytest.approx((low * 10 - 5, high * 10 - 5), abs=1e-9)


def test_an_observation_outside_the_bounds_is_refused():
    cs = BettingCS(0.05)
    with pytest.raises(ValueError, match=r"observation 1.5 is outside the bounds \[0.0, 1.0\]"):
        cs.update([1.5])
    with pytest.raises(ValueError, match="alpha must be in"):
        BettingCS(1.5)


def test_constant_observations_narrow_to_the_constant():
    cs = BettingCS(0.05)
    for _ in range(2000):
        cs.update([0.25])
    low, high = cs.interval()
    assert low <= 0.25 <= high and high - low < 0.03
    assert math.isclose(float(cs.mean[0]), 0.25)
