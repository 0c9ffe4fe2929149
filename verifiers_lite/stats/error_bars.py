"""Error bars that hold: standard errors clustered by example, 95% intervals, paired
differences between runs with a paired t-test, and power.

The rollouts of one example are correlated (same question), so the unit drawn from the dataset
is the example, not the rollout. Every figure here treats examples as clusters:

- Mean and clustered standard error (the CR1 "sandwich" estimator, as in Stata and inspect_ai):
  with ``S_g`` the sum and ``n_g`` the number of values of example ``g``, ``N = Σ n_g`` and ``G``
  examples, ``mean = Σ S_g / N`` and
  ``SE² = G / (G − 1) · Σ_g (S_g − n_g · mean)² / N²``.
  With one value per example this is the usual ``s / √G``.
- 95% interval: ``mean ± t(0.975; df) · SE``, Student's t with ``df = G_eff − 1`` degrees of
  freedom, where ``G_eff = (Σ n_g²)² / Σ n_g⁴`` is the effective number of examples (``G`` when
  every example has as many scored rollouts, so ``df = G − 1``; fewer when errored rollouts
  make them unequal, as a Satterthwaite approximation gives). Checked by simulation: the normal
  1.96 covered 91% with 10 examples where this covers 95%.
- Paired difference of two runs over their shared examples: ``d_g`` = mean of run b − mean of
  run a on example ``g``; ``Δ = mean(d_g)``, ``SE = sd(d_g) / √G`` (the same estimator with
  each example's difference as its one value), interval as above.
- p-value: the two-sided paired t-test, ``t = Δ / SE`` against Student's t with G − 1 degrees
  of freedom, so p < 0.05 exactly when the 95% interval excludes 0. (A sign-flip permutation
  test was tried and rejected: with 0/1 rewards and few rollouts the per-example differences
  take few values, and its exact p-values rejected a true null in ~1–3% of runs, not 5%.)
- Power: the minimal detectable difference at level α and power 1 − β is
  ``(t(1 − α/2; G − 1) + t(1 − β; G − 1)) · SE``; the examples needed to detect δ are the least
  ``n`` with ``(t(1 − α/2; n − 1) + t(1 − β; n − 1)) · σ_d / √n ≤ δ``.
- Undefined figures: with one example there is no spread between examples to measure, and with
  no variance (every example's mean the same, or every per-example difference the same) the
  standard error is 0 and an interval, a p-value, a detectable difference or a sample size
  computed from it would claim a certainty the data cannot give. These are NaN here (a sample
  size raises :class:`UndefinedStatistic`), and :attr:`Estimate.undefined` /
  :attr:`PairedTest.undefined` say why; every display shows ``undefined: <reason>``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from verifiers_lite._util.errors import VerifiersError

LEVEL = 0.95  # confidence level of every interval shown
ALPHA = 0.05  # two-sided test level for power
POWER = 0.80
_NAN = float("nan")
ONE_EXAMPLE = "one example"
NO_EXAMPLE = "no scored example"


class UndefinedStatistic(VerifiersError, ValueError):
    """A power or sample-size figure asked of data that cannot give it (no variance, one example)."""


Array = Sequence[float] | np.ndarray


def t_quantile(q: float, df: float) -> float:
    """Student's t quantile (NaN unless df > 0; df need not be whole)."""
    return float(special.stdtrit(df, q)) if df > 0 else _NAN


def critical_value(df: float, level: float = LEVEL) -> float:
    """The half-width multiplier of a two-sided ``level`` interval with ``df`` degrees of freedom."""
    return t_quantile(0.5 + level / 2, df)


def clustered_stderr(sums: Array, counts: Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, CR1 clustered standard error and the interval's degrees of freedom from
    per-cluster sums and counts along the last axis (vectorised over any leading axes). The one
    implementation of the formulas in the module docstring; NaN standard error below 2 clusters."""
    s, n = np.asarray(sums, float), np.asarray(counts, float)
    total, g = n.sum(axis=-1), s.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = s.sum(axis=-1) / total
        resid = s - n * mean[..., None]
        se = np.sqrt((resid**2).sum(axis=-1) * (g / (g - 1) if g > 1 else _NAN)) / total
        df = (n**2).sum(axis=-1) ** 2 / (n**4).sum(axis=-1) - 1
    return mean, se, df


@dataclass(frozen=True)
class Estimate:
    """A mean with its clustered standard error and ``level`` interval over ``clusters``
    examples (``n`` values). NaN standard error and interval with fewer than two examples."""

    mean: float
    stderr: float
    ci: tuple[float, float]
    n: int
    clusters: int
    level: float = LEVEL

    @property
    def undefined(self) -> str | None:
        """Why this mean has no interval (``one example``; ``no variance, every example's mean is
        0.000``), or None when it has one."""
        if not self.clusters:
            return NO_EXAMPLE
        return interval_undefined(self.mean, self.stderr)

    def describe(self, digits: int = 3) -> str:
        """``0.600 ± 0.135 (95% CI [0.295, 0.905])``: mean ± clustered stderr, then the interval."""
        return format_estimate(self.mean, self.stderr, self.ci, digits, self.level)


def interval_undefined(mean: float | None, stderr: float | None, digits: int = 3) -> str | None:
    """Why a mean with this clustered standard error has no interval: a NaN standard error
    means one example (no spread between examples to measure), a zero one no variance
    (every example's mean is the same); None when an interval exists."""
    if mean is None or math.isnan(mean):
        return NO_EXAMPLE
    if stderr is None or math.isnan(stderr):
        return ONE_EXAMPLE
    if stderr == 0:
        return f"no variance, every example's mean is {mean:.{digits}f}"
    return None


def format_estimate(
    mean: float | None,
    stderr: float | None,
    ci: Sequence[float] | None,
    digits: int = 3,
    level: float = LEVEL,
    table: bool = False,
) -> str:
    """The one text form of a figure with its error bar: ``0.600 ± 0.135 (95% CI [0.295, 0.905])``
    (``table``: ``0.600 ± 0.135  95% CI [0.295, 0.905]``); ``n/a`` without a mean; the mean and
    ``95% CI undefined: <reason>`` when there is no interval (one example, no variance)."""
    if mean is None or math.isnan(mean):
        return "n/a"
    reason = interval_undefined(mean, stderr, digits)
    if reason is None and (not ci or any(c is None or math.isnan(c) for c in ci)):
        reason = ONE_EXAMPLE
    if reason is not None:
        return f"{mean:.{digits}f}  ({level:.0%} CI undefined: {reason})"
    assert stderr is not None and ci is not None
    interval = f"{level:.0%} CI [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"
    return (
        f"{mean:.{digits}f} ± {stderr:.{digits}f}  {interval}"
        if table
        else f"{mean:.{digits}f} ± {stderr:.{digits}f} ({interval})"
    )


def cluster_totals(values: Array, clusters: Iterable[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums and counts of ``values`` (NaN values are left out), clusters in
    first-seen order; a cluster with no value left is dropped."""
    sums: dict[Hashable, float] = {}
    counts: dict[Hashable, int] = {}
    for v, c in zip(values, clusters, strict=True):
        v = float(v)
        if math.isnan(v):
            continue
        sums[c] = sums.get(c, 0.0) + v
        counts[c] = counts.get(c, 0) + 1
    return np.fromiter(sums.values(), float, len(sums)), np.fromiter(
        counts.values(), float, len(counts)
    )


def estimate_from_totals(sums: Array, counts: Array, level: float = LEVEL) -> Estimate:
    """:class:`Estimate` from per-cluster sums and counts."""
    n = np.asarray(counts, float)
    if n.sum() == 0:
        return Estimate(_NAN, _NAN, (_NAN, _NAN), 0, 0, level)
    mean, se, df = (float(x) for x in clustered_stderr(sums, n))
    half = critical_value(df, level) * se if se > 0 else _NAN  # no variance: no interval
    return Estimate(mean, se, (mean - half, mean + half), int(n.sum()), len(n), level)


def clustered_mean(
    values: Array, clusters: Iterable[Hashable] | None = None, level: float = LEVEL
) -> Estimate:
    """Mean, clustered standard error and interval of ``values``; ``clusters`` gives each
    value's example (default: every value its own). NaN values are left out."""
    vals = list(values)
    ids: Iterable[Hashable] = range(len(vals)) if clusters is None else clusters
    return estimate_from_totals(*cluster_totals(vals, ids), level=level)


@dataclass(frozen=True)
class PairedTest:
    """Mean paired difference over ``n`` examples with its standard error, interval, paired
    t-test p-value, the standard deviation of the differences and the minimal detectable
    difference (two-sided ``ALPHA``, ``POWER``)."""

    diff: float
    stderr: float
    ci: tuple[float, float]
    p_value: float
    mde: float
    sd: float
    n: int
    level: float = LEVEL
    #: why interval, p-value and power are NaN (None: they are defined)
    undefined: str | None = None


def paired_test(diffs: Array, level: float = LEVEL, no_variance: str | None = None) -> PairedTest:
    """The paired comparison of per-example differences ``d_g`` (module docstring). Below two
    examples, or when every difference is the same, the interval, p-value and detectable
    difference are NaN and ``undefined`` says why (``no_variance`` is that reason when the
    caller knows more, e.g. "no variance in either run")."""
    d = np.asarray(diffs, float)
    g = len(d)
    if g == 0:
        return PairedTest(
            _NAN, _NAN, (_NAN, _NAN), _NAN, _NAN, _NAN, 0, level, "no shared scored example"
        )
    mean, se, _ = (float(x) for x in clustered_stderr(d, np.ones(g)))
    sd = se * math.sqrt(g)
    if g == 1 or se == 0:
        reason = (
            "one shared example"
            if g == 1
            else (no_variance or f"no variance, every per-example difference is {mean:+.3f}")
        )
        return PairedTest(mean, se, (_NAN, _NAN), _NAN, _NAN, sd, g, level, reason)
    half = critical_value(g - 1, level) * se
    return PairedTest(
        mean,
        se,
        (mean - half, mean + half),
        float(paired_t_pvalues(mean, se, g)),
        minimal_detectable_difference(se, g),
        sd,
        g,
        level,
    )


def paired_t_pvalues(mean: Array | float, stderr: Array | float, n: int) -> np.ndarray:
    """Two-sided paired t-test p-values of ``mean / stderr`` with ``n − 1`` degrees of freedom
    (vectorised); a zero standard error gives 1 for a zero mean, else 0 (every example moved by
    the same amount); NaN below two examples."""
    m, se = np.asarray(mean, float), np.asarray(stderr, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, np.abs(m) / se, np.where(m == 0, 0.0, np.inf))
    return np.where(np.isnan(se), _NAN, 2.0 * special.stdtr(max(n - 1, 1), -t))


def minimal_detectable_difference(
    stderr: float, n: int, alpha: float = ALPHA, power: float = POWER
) -> float:
    """The smallest true difference a two-sided level-``alpha`` test detects with probability
    ``power``, given the standard error of the difference over ``n`` examples."""
    if n < 2 or math.isnan(stderr):
        return _NAN
    return (t_quantile(1 - alpha / 2, n - 1) + t_quantile(power, n - 1)) * stderr


def examples_needed_for(sd: float, delta: float, alpha: float = ALPHA, power: float = POWER) -> int:
    """Least number of examples whose minimal detectable difference is at most ``delta``, for
    per-example differences of standard deviation ``sd``."""
    if not delta > 0:
        raise ValueError(f"delta must be a positive difference, got {delta!r}")
    if math.isnan(sd):
        raise UndefinedStatistic(f"undefined: {ONE_EXAMPLE} (at least two are needed to plan from)")
    if sd == 0:
        raise UndefinedStatistic("undefined: no variance to plan from")
    z = float(special.ndtri(1 - alpha / 2) + special.ndtri(power))
    n = max(2, math.ceil((z * sd / delta) ** 2))  # the normal answer; t only raises it
    while minimal_detectable_difference(sd / math.sqrt(n), n, alpha, power) > delta:
        n += 1
    return n
