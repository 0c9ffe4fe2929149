"""Anytime-valid intervals for a bounded mean: a confidence sequence by betting.

An ordinary 95% interval is valid at one sample size fixed in advance; looking at it after every
example and stopping once it is narrow makes it cover the truth far less often than 95%. A
confidence sequence holds at every sample size at once — P(the truth is ever outside) <= alpha —
so a run may stop whenever it likes, as soon as it is narrow enough, and its interval still
covers the truth with the stated confidence.

The method is the hedged-capital betting confidence sequence of Waudby-Smith & Ramdas,
"Estimating means of bounded random variables by betting" (JRSS-B, 2024), with their
predictable plug-in bets: for each candidate mean ``m`` two gamblers bet that observations lie
above, resp. below ``m``, with bets sized from the running mean and variance of the
observations seen before; their mean capital is a nonnegative martingale when ``m`` is the
truth, so by Ville's inequality it reaches ``1/alpha`` with probability at most ``alpha``.
The interval is every ``m`` whose capital stayed below ``1/alpha``, intersected over time.

Observations must lie within known bounds (``lo``, ``hi``); for rewards clustered by example
each observation is one example's mean reward over its rollouts, so examples are the
independent draws (rollouts of one example are not). Candidates are a grid of ``grid`` points
between the bounds; the interval reported is widened by one grid step on each side, so it is
never narrower than the exact one.

:class:`BettingCS` tracks any number of independent sequences at once (one per simulated run
in a coverage study; one for a real run).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["BettingCS", "cs_interval"]

_BET_CAP = 0.75  # the largest fraction of capital a gambler stakes (c in the paper)


class BettingCS:
    """Confidence sequences for the means of ``runs`` independent sequences of observations in
    ``[lo, hi]`` at level ``1 - alpha``. Feed one observation per sequence with :meth:`update`
    (NaN: no observation for that sequence this step) and read :attr:`low`, :attr:`high`."""

    def __init__(
        self,
        alpha: float = 0.05,
        lo: float = 0.0,
        hi: float = 1.0,
        *,
        runs: int = 1,
        grid: int = 1000,
        target_half_width: float | None = None,
    ) -> None:
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"bounds must be finite with lo < hi, got ({lo}, {hi})")
        if runs < 1 or grid < 10:
            raise ValueError(f"runs must be >= 1 and grid >= 10, got {runs}, {grid}")
        self.alpha, self.lo, self.hi = alpha, lo, hi
        self.step = 1.0 / (grid + 1)
        self.m = np.linspace(self.step, 1.0 - self.step, grid)  # candidate means, scaled to (0, 1)
        self.log_up = np.zeros((runs, grid))  # log capital of the gambler betting x > m
        self.log_down = np.zeros((runs, grid))  # ... and of the one betting x < m
        self.n = np.zeros(runs, dtype=np.int64)
        self.total = np.zeros(runs)
        self.sq_dev = np.zeros(runs)  # sum of (x_i - running mean before i)^2, for the variance
        self._low = np.zeros(runs)  # running intersection, scaled
        self._high = np.ones(runs)
        self._log_level = math.log(1.0 / alpha)
        # Bets sized for the precision asked: the interval is narrowest about when it reaches it.
        self._target = None if target_half_width is None else target_half_width / (hi - lo)

    def update(self, values: ArrayLike) -> None:
        """One observation per sequence (NaN: none for that sequence this step). A value outside
        ``[lo, hi]`` is a ValueError: the interval's validity rests on the bounds."""
        x = np.atleast_1d(np.asarray(values, dtype=float))
        if x.shape != self.n.shape:
            raise ValueError(f"expected {self.n.size} values (one per sequence), got {x.shape}")
        seen = ~np.isnan(x)
        if np.any((x[seen] < self.lo) | (x[seen] > self.hi)):
            bad = x[seen][(x[seen] < self.lo) | (x[seen] > self.hi)][0]
            raise ValueError(
                f"observation {bad} is outside the bounds [{self.lo}, {self.hi}] the confidence "
                "sequence was given (give the reward's true range as bounds)"
            )
        if not seen.any():
            return
        rows = np.flatnonzero(seen)
        self._bet(rows, (x[rows] - self.lo) / (self.hi - self.lo))

    def _bet(self, rows: NDArray[np.intp], x: NDArray[np.float64]) -> None:
        """Both gamblers' bets on the scaled observations ``x`` of sequences ``rows``."""
        n, total = self.n[rows], self.total[rows]
        var_before = (0.25 + self.sq_dev[rows]) / (n + 1)
        t = n + 1
        if self._target is None:
            lam = np.sqrt(2.0 * math.log(2.0 / self.alpha) / (var_before * t * np.log1p(t)))
        else:
            lam = self._target / var_before  # capped below by _BET_CAP / m
        lam = lam[:, None]
        m = self.m[None, :]
        up = np.minimum(lam, _BET_CAP / m)
        down = np.minimum(lam, _BET_CAP / (1.0 - m))
        diff = x[:, None] - m
        self.log_up[rows] += np.log1p(up * diff)
        self.log_down[rows] += np.log1p(-down * diff)
        self.n[rows] = t
        self.total[rows] = total + x
        mean_after = (0.5 + total + x) / (t + 1)  # the paper's running mean, x included
        self.sq_dev[rows] += (x - mean_after) ** 2
        self._narrow(rows)

    def _narrow(self, rows: NDArray[np.intp]) -> None:
        """Intersect each sequence's interval with the candidates its capital has not rejected."""
        # Hedged capital: max(K+/2, K-/2) >= 1/alpha rejects m.
        log_k = np.logaddexp(self.log_up[rows], self.log_down[rows]) - math.log(2.0)
        keep = log_k < self._log_level
        any_kept = keep.any(axis=1)
        first = np.argmax(keep, axis=1)
        last = keep.shape[1] - 1 - np.argmax(keep[:, ::-1], axis=1)
        low = np.where(any_kept, self.m[first] - self.step, 1.0)
        high = np.where(any_kept, self.m[last] + self.step, 0.0)
        self._low[rows] = np.maximum(self._low[rows], np.clip(low, 0.0, 1.0))
        self._high[rows] = np.minimum(self._high[rows], np.clip(high, 0.0, 1.0))

    @property
    def low(self) -> NDArray[np.float64]:
        """Each sequence's lower end, in the observations' units."""
        return self.lo + (self.hi - self.lo) * np.minimum(self._low, self._high)

    @property
    def high(self) -> NDArray[np.float64]:
        """Each sequence's upper end, in the observations' units."""
        return self.lo + (self.hi - self.lo) * np.maximum(self._high, self._low)

    @property
    def half_width(self) -> NDArray[np.float64]:
        """Half the width of each sequence's interval."""
        return (self.high - self.low) / 2

    @property
    def mean(self) -> NDArray[np.float64]:
        """Each sequence's plain mean of its observations (NaN before the first)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.lo + (self.hi - self.lo) * self.total / self.n

    def interval(self, run: int = 0) -> tuple[float, float]:
        """One sequence's interval ``(low, high)``."""
        return float(self.low[run]), float(self.high[run])


def cs_interval(
    values: Sequence[float], alpha: float = 0.05, lo: float = 0.0, hi: float = 1.0
) -> tuple[float, float]:
    """The confidence sequence's interval after ``values`` (in order), one sequence."""
    cs = BettingCS(alpha, lo, hi)
    for v in values:
        cs.update([v])
    return cs.interval()
