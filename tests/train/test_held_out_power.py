"""The GRPO benchmark's held-out set (questions x rollouts) detects a +0.10 gain with at least
80% power, by simulation of the paired comparison ``vf.compare_runs`` makes (a paired t
interval over per-question mean rewards), under a pessimistic model of how training changes the
questions; and a set much smaller would not (the simulation can fail)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from verifiers_lite.stats.error_bars import paired_test

ROOT = Path(__file__).resolve().parents[2]
# The base model on two-digit additions, 50 validation questions x 4 rollouts: mean reward
# 0.275, per-question means' SD 0.329, so the questions' own success rates have variance
# ~0.078 once the binomial noise of 4 rollouts is taken out: a Beta with these moments.
BASE_MEAN, BASE_VAR = 0.275, 0.078


def _beta(mean: float) -> tuple[float, float]:
    k = BASE_MEAN * (1 - BASE_MEAN) / BASE_VAR - 1  # the same spread of difficulty after
    return mean * k, (1 - mean) * k


def power(questions: int, rollouts: int, gain: float, sims: int = 600, seed: int = 0) -> float:
    """Share of simulated before/after evaluations whose paired 95% interval excludes 0. After
    training each question's success rate is drawn anew, independent of its rate before
    (training reshuffles which questions it gets right: the widest per-question differences
    for a given mean gain of ``gain``)."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(sims):
        p = rng.beta(*_beta(BASE_MEAN), questions)
        q = rng.beta(*_beta(BASE_MEAN + gain), questions)
        before = rng.binomial(rollouts, p) / rollouts
        after = rng.binomial(rollouts, q) / rollouts
        lo, _hi = paired_test(after - before).ci
        hits += lo > 0
    return hits / sims


def _bench():
    spec = importlib.util.spec_from_file_location(
        "train_grpo_power", ROOT / "benchmarks" / "train_grpo.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_held_out_set_has_80_percent_power_for_a_gain_of_ten_points() -> None:
    bench = _bench()
    got = power(bench.HELD_OUT_QUESTIONS, bench.EVAL_ROLLOUTS, 0.10)
    # 600 simulations: the estimate's SD is under 0.02.
    assert got >= 0.80, got
    assert power(60, bench.EVAL_ROLLOUTS, 0.10) < 0.6  # a quarter of the set: far too few
    assert power(bench.HELD_OUT_QUESTIONS, bench.EVAL_ROLLOUTS, 0.0) < 0.05  # no gain: 2.5%
