"""One streaming pass over a run's rows: the summary, pass@k counts and per-example figures.

Rows held in memory and rows read back from disk go through this same accumulator, one row at a
time, so a run's summary is computed one way whatever holds its rows, and a million rows cost a
few numbers per example (:class:`~verifiers_lite.cluster_totals.ClusterTotals`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from verifiers_lite.cluster_totals import ClusterTotals, values_for
from verifiers_lite.records import Row
from verifiers_lite.results.metrics import PassCriterion, scored_reward

if TYPE_CHECKING:
    from verifiers_lite.stats import Estimate


class RowAggregate:
    """Add rows with :meth:`add`; read :meth:`summary` and :meth:`pass_counts` at any time."""

    def __init__(self, criterion: PassCriterion | None = None) -> None:
        self.criterion = criterion or PassCriterion()
        self.num_rollouts = 0
        self.num_scored = 0
        self._reward_total = 0.0
        self.errors: Counter[Any] = Counter()
        self.stop_reasons: Counter[str] = Counter()
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.reasoning_tokens = 0  # of the completion tokens, as far as the server reported them
        # Per example (clustered error bars, pass@k): reward sum over its scored rollouts, how
        # many of them pass, each metric's sum over the scored rollouts that have it.
        self._rewards = ClusterTotals()
        self._passed = ClusterTotals()
        self._metrics: dict[str, ClusterTotals] = {}

    def add_all(self, rows: Iterable[Row]) -> RowAggregate:
        for row in rows:
            self.add(row)
        return self

    def add(self, row: Row) -> None:
        self.num_rollouts += 1
        err = row.get("error")
        if err:
            self.errors[err.get("category") if isinstance(err, dict) else None] += 1
        self.stop_reasons[str(row.get("stop_reason") or "none")] += 1
        usage = row.get("usage") or {}
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)
        self.reasoning_tokens += int(usage.get("reasoning_tokens") or 0)
        eid = row.get("example_id")
        reward = scored_reward(row)
        if reward is None:
            self._rewards.add(eid, count=0)  # the example is known, with no score
            return
        self.num_scored += 1
        self._reward_total += reward
        self._rewards.add(eid, reward)
        self._passed.add(eid, float(self.criterion.passes(row)))
        for name, value in (row.get("metrics") or {}).items():
            if value is not None:
                totals = self._metrics.get(name)
                if totals is None:
                    totals = self._metrics[name] = ClusterTotals()
                totals.add(eid, float(value))

    def reward_estimate(self) -> Estimate:
        """Mean reward over scored rollouts with its standard error clustered by example and 95%
        interval (``verifiers_lite.stats``)."""
        from verifiers_lite.stats import estimate_from_totals  # numpy/scipy: when a figure is asked

        e = estimate_from_totals(*self._rewards.sums_and_counts())
        if not self.num_scored:
            return e
        mean = self._reward_total / self.num_scored  # the plain sum, as a mean over a list would be
        half = (e.ci[1] - e.ci[0]) / 2
        return replace(e, mean=mean, ci=(mean - half, mean + half))

    def metric_estimates(self) -> dict[str, Estimate]:
        """Each metric's mean over the scored rollouts that have it, with its clustered error bar."""
        from verifiers_lite.stats import estimate_from_totals

        return {name: estimate_from_totals(*totals.sums_and_counts()) for name, totals in self._metrics.items()}

    def per_example(self) -> dict[Any, tuple[int, float, int]]:
        """example_id -> (scored rollouts, reward sum, passing rollouts), in first-seen order."""
        passed = self._passed.totals()
        return {eid: (n, s, int(passed.get(eid, (0.0, 0))[0])) for eid, (s, n) in self._rewards.totals().items()}

    def pass_counts(self) -> list[tuple[int, int]]:
        """(scored, passing) per example with a scored rollout: pass@k's input."""
        ids, _, scored = self._rewards.merged()  # arrays: no dict of a quarter million examples
        passing = values_for(ids, self._passed).astype(np.int64)
        kept = scored > 0
        return list(zip(scored[kept].tolist(), passing[kept].tolist(), strict=True))

    def summary(self) -> dict[str, Any]:
        """Mean reward and each metric's mean over the scored rollouts (errored ones have no
        reward and are left out), each with its standard error clustered by example
        (``*_stderr``) and 95% interval (``*_ci``), the number scored and error counts by
        category beside them; counts by stop reason and token totals over all rollouts."""
        reward, metrics = self.reward_estimate(), self.metric_estimates()
        return {
            "num_rollouts": self.num_rollouts,
            "num_scored": self.num_scored,
            "num_errors": sum(self.errors.values()),
            "reward_mean": reward.mean,
            "reward_stderr": reward.stderr,
            "reward_ci": reward.ci,
            "metrics_mean": {k: e.mean for k, e in metrics.items()},
            "metrics_stderr": {k: e.stderr for k, e in metrics.items()},
            "metrics_ci": {k: e.ci for k, e in metrics.items()},
            "errors": dict(self.errors),
            "stop_reasons": dict(self.stop_reasons.most_common()),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }


def token_line(summary: dict[str, Any]) -> str:
    """A summary's token totals in one line: ``120 prompt / 45 completion (30 reasoning)``, the
    reasoning part when the server reported reasoning tokens."""
    line = f"{summary['prompt_tokens']} prompt / {summary['completion_tokens']} completion"
    reasoning = summary.get("reasoning_tokens") or 0
    return f"{line} ({reasoning} reasoning)" if reasoning else line
