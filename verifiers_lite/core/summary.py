"""A run's summary, accumulated one row at a time: the one set of figures every display reads.

The live progress displays, the summary a run writes into ``metadata.json``, ``vf-lite eval``'s
table, the notebook's results and the viewer all read a :class:`RunSummary` fed the same rows, so
they agree figure by figure. One rule for what a row counts as:

- scored when its reward is a number other than NaN (:func:`~verifiers_lite.core.pass_criterion.scored_reward`);
  an unscored row counts in ``num_rollouts`` and nowhere in the reward figures;
- failed when it has an ``error``, counted under its category, ``unknown`` for an error without
  one (:func:`~verifiers_lite.core.columns.error_category`);
- a metric, a timing part and a token count count where the row has a number for them (NaN and
  non-numbers left out); stop reasons under their name, ``none`` for a row without one;
- priced when its ``cost_usd`` is a number (the embedded model's rows: 0), else unpriced
  (``None``: a model without a price, or a run older than pricing): cost figures are over the
  priced rows, and a run with none is "unpriced", never 0.

Per example it keeps a few numbers (:class:`~verifiers_lite.stats.cluster_totals.ClusterTotals`),
so a million rows cost a few MB, and clustered error bars and pass@k come from the same pass.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from verifiers_lite.core.columns import error_category
from verifiers_lite.core.pass_criterion import PassCriterion
from verifiers_lite.core.records import TIMING_PARTS
from verifiers_lite.stats.cluster_totals import ClusterTotals, values_for

if TYPE_CHECKING:
    from verifiers_lite.stats.error_bars import Estimate

#: the timing keys summarised: the parts a rollout's time is split into, then its own and total
TIMING_KEYS: tuple[str, ...] = (*(key for key, _ in TIMING_PARTS), "rollout_ms", "total_ms")
_TOKEN_KEYS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")


def _number(value: Any) -> float | None:
    """A finite-or-infinite number as a float; None for NaN, booleans and anything else."""
    if value.__class__ is float:
        return None if value != value else value  # NaN is not equal to itself
    if value.__class__ is int:
        return float(value)
    return None


def _reward(row: Mapping[str, Any]) -> float | None:
    # core.pass_criterion.scored_reward's rule, inlined: this runs once per row of every run
    reward = row.get("reward")
    if reward is None or (reward.__class__ is float and math.isnan(reward)):
        return None
    return float(reward)


class RunSummary:
    """Add rows with :meth:`add`; read :meth:`summary`, the estimates and pass counts at any time.

    ``criterion`` decides which scored rows pass (pass@k's counts)."""

    def __init__(self, criterion: PassCriterion | None = None) -> None:
        self.criterion = criterion or PassCriterion()
        self.num_rollouts = 0
        self.num_scored = 0
        self.reward_total = 0.0
        self.errors: Counter[str] = Counter()
        self.stop_reasons: Counter[str] = Counter()
        self.tokens = dict.fromkeys(_TOKEN_KEYS, 0)
        # Per example (clustered error bars, pass@k): the reward over its scored rollouts, how
        # many of them pass, each metric over the scored rollouts that have it.
        self.example_rewards = ClusterTotals()
        self._passed = ClusterTotals()
        self._metrics: dict[str, ClusterTotals] = {}
        self._timing: dict[str, list[float]] = {}  # timing key -> [sum, rollouts that have it]
        self.cost_total = 0.0  # over the priced rows
        self.num_unpriced = 0
        self._cost = ClusterTotals()  # per example: the priced rows' cost (its interval)

    def add_all(self, rows: Iterable[Mapping[str, Any]]) -> RunSummary:
        for row in rows:
            self.add(row)
        return self

    def add(self, row: Mapping[str, Any]) -> float | None:
        """Count one row; returns its reward as counted (None: not scored)."""
        self.num_rollouts += 1
        if row.get("error"):
            self.errors[str(error_category(row) or "unknown")] += 1
        self.stop_reasons[str(row.get("stop_reason") or "none")] += 1
        usage = row.get("usage")
        if usage.__class__ is dict:
            tokens = self.tokens
            for key in _TOKEN_KEYS:
                value = usage.get(key)
                if value.__class__ is int:
                    tokens[key] += value
                elif value.__class__ is float and math.isfinite(value):
                    tokens[key] += int(value)
        timing = row.get("timing")
        if timing.__class__ is dict:
            self._add_timing(timing)
        eid = row.get("example_id")
        cost = _number(row.get("cost_usd"))
        if cost is None or not math.isfinite(cost):
            self.num_unpriced += 1
        else:
            self.cost_total += cost
            self._cost.add(eid, cost)
        reward = _reward(row)
        if reward is None:
            self.example_rewards.add(eid, count=0)  # the example is known, with no score
            return None
        self.num_scored += 1
        self.reward_total += reward
        self.example_rewards.add(eid, reward)
        self._passed.add(eid, float(self.criterion.passes(row)))
        metrics = row.get("metrics")
        if metrics:
            for name, raw in metrics.items():
                value = _number(raw)
                if value is None:
                    continue
                totals = self._metrics.get(name)
                if totals is None:
                    totals = self._metrics[name] = ClusterTotals()
                totals.add(eid, value)
        return reward

    def _add_timing(self, timing: dict[str, Any]) -> None:
        for key in TIMING_KEYS:
            value = _number(timing.get(key))
            if value is not None:
                acc = self._timing.get(key)
                if acc is None:
                    acc = self._timing[key] = [0.0, 0]
                acc[0] += value
                acc[1] += 1

    # -- figures -------------------------------------------------------------------------------

    @property
    def num_errors(self) -> int:
        return sum(self.errors.values())

    @property
    def mean_reward(self) -> float:
        """The plain mean over scored rows (NaN before the first)."""
        return self.reward_total / self.num_scored if self.num_scored else math.nan

    def timing_means(self) -> dict[str, float]:
        """Mean milliseconds per rollout of each part of its time (``records.TIMING_PARTS``:
        waiting for a request slot, in the model request, in the environment, waiting for its
        group, scoring) and of ``rollout_ms`` and ``total_ms``, over the rollouts that record it."""
        return {k: acc[0] / acc[1] for k, acc in self._timing.items() if acc[1]}

    def reward_estimate(self) -> Estimate:
        """Mean reward over scored rollouts with its standard error clustered by example and 95%
        interval (``verifiers_lite.stats.error_bars``)."""
        # numpy/scipy are imported only once a figure is asked
        from verifiers_lite.stats.error_bars import estimate_from_totals

        e = estimate_from_totals(*self.example_rewards.sums_and_counts())
        if not self.num_scored:
            return e
        mean = self.mean_reward  # the plain sum, as a mean over a list would be
        half = (e.ci[1] - e.ci[0]) / 2
        return replace(e, mean=mean, ci=(mean - half, mean + half))

    def cost_estimate(self) -> Estimate | None:
        """Mean cost in USD per priced rollout, with its standard error clustered by example and
        95% interval; None when no row is priced ("unpriced")."""
        from verifiers_lite.stats.error_bars import estimate_from_totals

        if self.num_rollouts == self.num_unpriced:
            return None
        return estimate_from_totals(*self._cost.sums_and_counts())

    def metric_estimates(self) -> dict[str, Estimate]:
        """Each metric's mean over the scored rollouts that have it, with its clustered error bar."""
        from verifiers_lite.stats.error_bars import estimate_from_totals

        return {
            name: estimate_from_totals(*totals.sums_and_counts())
            for name, totals in self._metrics.items()
        }

    def per_example(self) -> dict[Any, tuple[int, float, int]]:
        """example_id -> (scored rollouts, reward sum, passing rollouts), in first-seen order."""
        passed = self._passed.totals()
        return {
            eid: (n, s, int(passed.get(eid, (0.0, 0))[0]))
            for eid, (s, n) in self.example_rewards.totals().items()
        }

    def pass_counts(self) -> list[tuple[int, int]]:
        """(scored, passing) per example with a scored rollout: pass@k's input."""
        import numpy as np

        ids, _, scored = self.example_rewards.merged()  # arrays: no dict per example
        passing = values_for(ids, self._passed).astype(np.int64)
        kept = scored > 0
        return list(zip(scored[kept].tolist(), passing[kept].tolist(), strict=True))

    def summary(self) -> dict[str, Any]:
        """Mean reward and each metric's mean over the scored rollouts, each with its standard
        error clustered by example (``*_stderr``) and 95% interval (``*_ci``; NaN, with the
        reason in ``*_ci_undefined``, for one example or no variance), the number scored and
        error counts by category beside them; counts by stop reason, token totals and the mean
        time per rollout of each part (``timing_ms``: ``queue_ms`` waiting for a request slot,
        ``generation_ms`` in the model request, ``env_ms`` in the environment,
        ``group_wait_ms``, ``scoring_ms``, and ``rollout_ms``, ``total_ms``); the cost in USD
        over the priced rollouts (``cost_usd_total``, ``cost_usd_mean`` with ``_stderr`` and
        ``_ci``; None when none is priced) and how many are unpriced (``num_unpriced``)."""
        reward, metrics = self.reward_estimate(), self.metric_estimates()
        cost = self.cost_estimate()
        return {
            "num_rollouts": self.num_rollouts,
            "num_scored": self.num_scored,
            "num_errors": self.num_errors,
            "reward_mean": reward.mean,
            "reward_stderr": reward.stderr,
            "reward_ci": reward.ci,
            "reward_ci_undefined": reward.undefined,
            "metrics_mean": {k: e.mean for k, e in metrics.items()},
            "metrics_stderr": {k: e.stderr for k, e in metrics.items()},
            "metrics_ci": {k: e.ci for k, e in metrics.items()},
            "metrics_ci_undefined": {k: e.undefined for k, e in metrics.items()},
            "errors": dict(self.errors.most_common()),
            "stop_reasons": dict(self.stop_reasons.most_common()),
            **self.tokens,
            "timing_ms": self.timing_means(),
            "cost_usd_total": self.cost_total if cost is not None else None,
            "cost_usd_mean": cost.mean if cost is not None else None,
            "cost_usd_stderr": cost.stderr if cost is not None else None,
            "cost_usd_ci": cost.ci if cost is not None else None,
            "num_unpriced": self.num_unpriced,
        }


def token_line(summary: Mapping[str, Any]) -> str:
    """A summary's token totals in one line: ``120 prompt / 45 completion (30 reasoning)``, the
    reasoning part when the server reported reasoning tokens."""
    line = f"{summary['prompt_tokens']} prompt / {summary['completion_tokens']} completion"
    reasoning = summary.get("reasoning_tokens") or 0
    return f"{line} ({reasoning} reasoning)" if reasoning else line


def cost_per_reward(summary: Mapping[str, Any]) -> float | None:
    """USD spent per unit of reward earned: the priced rows' cost over the scored rows' reward
    sum; None when unpriced or when no reward was earned."""
    total, mean = summary.get("cost_usd_total"), summary.get("reward_mean")
    if total is None or mean is None or not math.isfinite(mean):
        return None
    earned = float(mean) * int(summary.get("num_scored") or 0)
    return float(total) / earned if earned > 0 else None


def cost_line(summary: Mapping[str, Any], per_reward: bool = False) -> str:
    """A summary's cost in one line: ``$0.0123 total, $0.00041 a rollout [0.00038, 0.00044]``
    (with ``per_reward``: and ``, $0.00082 per unit of reward``), ``unpriced`` when no rollout
    is priced (never $0), with how many are unpriced when some are."""
    total = summary.get("cost_usd_total")
    unpriced = int(summary.get("num_unpriced") or 0)
    if total is None:
        return "unpriced"
    mean, ci = summary.get("cost_usd_mean"), summary.get("cost_usd_ci")
    line = f"${_money(total)} total"
    if mean is not None:
        line += f", ${_money(mean)} a rollout"
        if ci is not None and all(isinstance(x, float) and math.isfinite(x) for x in ci):
            line += f" [{_money(ci[0])}, {_money(ci[1])}]"
    per = cost_per_reward(summary) if per_reward else None
    if per is not None:
        line += f", ${_money(per)} per unit of reward"
    return line + (f" ({unpriced} rollouts unpriced)" if unpriced else "")


def _money(usd: float) -> str:
    """Dollars with the digits that matter: 2 decimals from $1, 4 significant digits below."""
    if usd == 0 or abs(usd) >= 1:
        return f"{usd:,.2f}"
    return f"{usd:.4g}" if abs(usd) >= 1e-4 else f"{usd:.2e}"
