"""One streaming pass over a run's rows: the summary, pass@k counts and per-example figures.

Rows held in memory and rows read back from disk go through this same accumulator, one row at a
time, so a run's summary is computed one way whatever holds its rows, and a million rows cost a
few numbers per example (:class:`~verifiers_lite.stats.cluster_totals.ClusterTotals`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from verifiers_lite.core.pass_criterion import PassCriterion, scored_reward
from verifiers_lite.core.records import TIMING_PARTS, Row
from verifiers_lite.stats.cluster_totals import ClusterTotals, values_for

if TYPE_CHECKING:
    from verifiers_lite.stats.error_bars import Estimate

_TIMING_KEYS = tuple(key for key, _ in TIMING_PARTS)


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
        self._timing: dict[str, list[float]] = {}  # timing key -> [sum, rollouts that have it]

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
        self._add_timing(row.get("timing"))
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

    def _add_timing(self, timing: Any) -> None:
        if not isinstance(timing, dict):
            return
        for key in (*_TIMING_KEYS, "rollout_ms", "total_ms"):
            value = timing.get(key)
            if value.__class__ in (int, float):
                acc = self._timing.setdefault(key, [0.0, 0])
                acc[0] += value
                acc[1] += 1

    def timing_means(self) -> dict[str, float]:
        """Mean milliseconds per rollout of each part of its time (``records.TIMING_PARTS``:
        waiting for a request slot, in the model request, in the environment, waiting for its
        group, scoring) and of ``rollout_ms`` and ``total_ms``, over the rollouts that record it
        (rows written before a part was recorded lack it)."""
        return {k: acc[0] / acc[1] for k, acc in self._timing.items() if acc[1]}

    def reward_estimate(self) -> Estimate:
        """Mean reward over scored rollouts with its standard error clustered by example and 95%
        interval (``verifiers_lite.stats.error_bars``)."""
        from verifiers_lite.stats.error_bars import (
            estimate_from_totals,  # numpy/scipy: when a figure is asked
        )

        e = estimate_from_totals(*self._rewards.sums_and_counts())
        if not self.num_scored:
            return e
        mean = self._reward_total / self.num_scored  # the plain sum, as a mean over a list would be
        half = (e.ci[1] - e.ci[0]) / 2
        return replace(e, mean=mean, ci=(mean - half, mean + half))

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
            for eid, (s, n) in self._rewards.totals().items()
        }

    def pass_counts(self) -> list[tuple[int, int]]:
        """(scored, passing) per example with a scored rollout: pass@k's input."""
        ids, _, scored = self._rewards.merged()  # arrays: no dict of a quarter million examples
        passing = values_for(ids, self._passed).astype(np.int64)
        kept = scored > 0
        return list(zip(scored[kept].tolist(), passing[kept].tolist(), strict=True))

    def summary(self) -> dict[str, Any]:
        """Mean reward and each metric's mean over the scored rollouts (errored ones have no
        reward and are left out), each with its standard error clustered by example
        (``*_stderr``) and 95% interval (``*_ci``; NaN, with the reason in ``*_ci_undefined``, for
        one example or no variance), the number scored and error counts by
        category beside them; counts by stop reason, token totals and the mean time per rollout
        of each part (``timing_ms``: ``queue_ms`` waiting for a request slot, ``generation_ms`` in
        the model request, ``env_ms`` in the environment, ``group_wait_ms``, ``scoring_ms``, and
        ``rollout_ms``, ``total_ms``) over all rollouts."""
        reward, metrics = self.reward_estimate(), self.metric_estimates()
        return {
            "num_rollouts": self.num_rollouts,
            "num_scored": self.num_scored,
            "num_errors": sum(self.errors.values()),
            "reward_mean": reward.mean,
            "reward_stderr": reward.stderr,
            "reward_ci": reward.ci,
            "reward_ci_undefined": reward.undefined,
            "metrics_mean": {k: e.mean for k, e in metrics.items()},
            "metrics_stderr": {k: e.stderr for k, e in metrics.items()},
            "metrics_ci": {k: e.ci for k, e in metrics.items()},
            "metrics_ci_undefined": {k: e.undefined for k, e in metrics.items()},
            "errors": dict(self.errors),
            "stop_reasons": dict(self.stop_reasons.most_common()),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "timing_ms": self.timing_means(),
        }


def token_line(summary: dict[str, Any]) -> str:
    """A summary's token totals in one line: ``120 prompt / 45 completion (30 reasoning)``, the
    reasoning part when the server reported reasoning tokens."""
    line = f"{summary['prompt_tokens']} prompt / {summary['completion_tokens']} completion"
    reasoning = summary.get("reasoning_tokens") or 0
    return f"{line} ({reasoning} reasoning)" if reasoning else line
