"""Stopping at a precision, validly: coverage of the betting confidence sequence at its stopping
time over many simulated runs, and the examples (rollouts) it takes against fixed-n runs.

Each simulated run draws examples one at a time from a population with a known mean reward
(rewards clustered by example: each example has its own level, 4 rollouts each; the observation
is the example's mean reward), feeds them to ``BettingCS`` (what ``until=vf.Precision(...)``
uses) and stops once the 95% interval's half-width is at most the target. Reported per
scenario: coverage of the truth at the stopping time (must be >= 95%), the same rule on the
ordinary interval (mean +- 1.96 standard errors, peeked at after every example from the 10th),
the mean examples used, and two fixed-n runs of the same final width: one that knew the true
variance in advance (the ordinary interval at its best) and one planned from the reward range
alone (standard deviation 0.5 for rewards in [0, 1], what one can plan without a pilot run).

The paired scenario compares two models on the same examples (their levels correlated); the
run stops once the interval of the mean difference excludes 0 or is narrower than the target;
coverage is of the true difference, and "sign right" counts runs that stopped on a sign and
got it right.

    python benchmarks/anytime_precision.py              # 1,000 runs per scenario, half-width 0.02
    python benchmarks/anytime_precision.py --runs 200 --half-width 0.05 --figure out.png
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from verifiers_lite.stats.confidence_sequence import BettingCS

ROLLOUTS = 4
Z95 = 1.959964


@dataclass
class Scenario:
    name: str
    draw: Callable[[np.random.Generator, int], np.ndarray]  # one example's observation per run
    truth: float
    sd: float  # true standard deviation of one observation (an example's mean reward)
    bounds: tuple[float, float] = (0.0, 1.0)
    paired: bool = False


def _bernoulli(rng: np.random.Generator, runs: int) -> np.ndarray:
    rates = np.where(rng.random(runs) < 0.5, 0.9, 0.2)
    return rng.binomial(ROLLOUTS, rates) / ROLLOUTS


def _beta(rng: np.random.Generator, runs: int) -> np.ndarray:
    level = rng.beta(2.0, 5.0, runs)
    a, b = level[:, None] * 6 + 1e-9, (1 - level[:, None]) * 6 + 1e-9
    return rng.beta(a, b, (runs, ROLLOUTS)).mean(axis=1)


def _paired(rng: np.random.Generator, runs: int) -> np.ndarray:
    """Model B minus model A on one example: A's rate 0.3 or 0.8, B's 0.05 higher."""
    base = np.where(rng.random(runs) < 0.5, 0.8, 0.3)
    a = rng.binomial(ROLLOUTS, base) / ROLLOUTS
    b = rng.binomial(ROLLOUTS, base + 0.05) / ROLLOUTS
    return b - a


def _sd(draw: Callable[[np.random.Generator, int], np.ndarray]) -> float:
    return float(draw(np.random.default_rng(12345), 2_000_000).std())


def simulate(s: Scenario, runs: int, half_width: float, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    cs = BettingCS(0.05, *s.bounds, runs=runs, target_half_width=half_width)
    stopped = np.zeros(runs, dtype=bool)
    covered = np.zeros(runs, dtype=bool)
    sign_stop = np.zeros(runs, dtype=bool)
    used = np.zeros(runs)
    final_half = np.zeros(runs)
    naive = _Naive(runs, half_width, s.truth)
    step = 0
    while not (stopped.all() and naive.done.all()):
        step += 1
        x = s.draw(rng, runs)
        cs.update(np.where(stopped, np.nan, x))
        low, high = cs.low, cs.high
        narrow = (high - low) / 2 <= half_width
        signed = s.paired & ((low > 0) | (high < 0))
        now = ~stopped & (narrow | signed)
        covered[now] = (low[now] <= s.truth) & (s.truth <= high[now])
        sign_stop[now] = signed[now] & ~narrow[now]
        used[now], final_half[now] = step, ((high - low) / 2)[now]
        stopped |= now
        naive.add(x, step)
    oracle = (Z95 * s.sd / final_half) ** 2  # fixed n with the variance known, same width
    planned = (Z95 * (s.bounds[1] - s.bounds[0]) / 2 / final_half) ** 2  # from the range alone
    out = {
        "coverage": covered.mean(),
        "naive_coverage": naive.covered.mean(),
        "examples": used.mean(),
        "examples_p90": float(np.percentile(used, 90)),
        "fixed_known_variance": oracle.mean(),
        "fixed_from_range": planned.mean(),
        "final_half_width": final_half.mean(),
    }
    if s.paired:
        out["stopped_on_sign"] = sign_stop.mean()
    return out


class _Naive:
    """The ordinary interval peeked at after every example, stopping once narrow."""

    def __init__(self, runs: int, half_width: float, truth: float) -> None:
        self.n, self.s, self.s2 = np.zeros(runs), np.zeros(runs), np.zeros(runs)
        self.done = np.zeros(runs, dtype=bool)
        self.covered = np.zeros(runs, dtype=bool)
        self.half_width, self.truth = half_width, truth

    def add(self, x: np.ndarray, step: int) -> None:
        self.n += 1
        self.s += x
        self.s2 += x * x
        var = np.maximum(self.s2 / self.n - (self.s / self.n) ** 2, 0) * self.n / max(step - 1, 1)
        half = Z95 * np.sqrt(var / self.n)
        now = ~self.done & (step >= 10) & (half <= self.half_width)
        self.covered[now] = np.abs(self.s[now] / self.n[now] - self.truth) <= half[now]
        self.done |= now


def scenarios() -> list[Scenario]:
    return [
        Scenario("bernoulli, clustered (rates 0.9 / 0.2)", _bernoulli, 0.55, _sd(_bernoulli)),
        Scenario("continuous, clustered (Beta levels)", _beta, 2 / 7, _sd(_beta)),
        Scenario("paired difference (+0.05)", _paired, 0.05, _sd(_paired), (-1.0, 1.0), True),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--half-width", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--figure", help="write a bar chart of examples used to this PNG")
    args = parser.parse_args()
    results = []
    for i, s in enumerate(scenarios()):
        t0 = time.perf_counter()
        r = simulate(s, args.runs, args.half_width, args.seed + i)
        results.append((s, r))
        print(f"\n{s.name}: truth {s.truth:.4f}, sd of an example's mean {s.sd:.4f}")
        print(
            f"  coverage at the stop {r['coverage']:.3f} (ordinary interval, peeked: "
            f"{r['naive_coverage']:.3f}) over {args.runs} runs, {time.perf_counter() - t0:.0f} s"
        )
        extra = f"; stopped on the sign {r['stopped_on_sign']:.1%}" if s.paired else ""
        print(
            f"  examples used: mean {r['examples']:.0f} (p90 {r['examples_p90']:.0f}), "
            f"rollouts {r['examples'] * ROLLOUTS:.0f}; final half-width "
            f"{r['final_half_width']:.4f}{extra}"
        )
        print(
            f"  fixed-n of the same width: variance known {r['fixed_known_variance']:.0f} "
            f"examples ({r['examples'] / r['fixed_known_variance']:.2f}x), planned from the "
            f"range {r['fixed_from_range']:.0f} ({r['examples'] / r['fixed_from_range']:.2f}x)"
        )
    if args.figure:
        _figure(results, args.figure)


def _figure(results: list[tuple[Scenario, dict[str, float]]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    names = [s.name for s, _ in results]
    y = np.arange(len(names))
    keys = ("examples", "fixed_known_variance", "fixed_from_range")
    labels = ("confidence sequence", "fixed n, variance known", "fixed n, from the range")
    for k, (key, label) in enumerate(zip(keys, labels, strict=True)):
        ax.barh(y + (k - 1) * 0.25, [r[key] for _, r in results], height=0.25, label=label)
    ax.set_yticks(y, names)
    ax.set_xlabel("examples to reach the same half-width")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
