"""One streaming pass over a run's rows: the summary, pass@k counts and per-example figures.

Rows held in memory and rows read back from disk go through this same accumulator, one row at a
time, so a run's summary is computed one way whatever holds its rows, and a million rows cost a
few numbers per example (rows of one example usually come together; they are kept as runs).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from verifiers_lite.results.metrics import PassCriterion, is_scored

if TYPE_CHECKING:
    from verifiers_lite.stats import Estimate


class RowAggregate:
    """Add rows with :meth:`add`; read :meth:`summary` and :meth:`pass_counts` at any time."""

    def __init__(self, criterion: PassCriterion | None = None) -> None:
        self.criterion = criterion or PassCriterion()
        self.num_rollouts = 0
        self.num_scored = 0
        self._reward_total = 0.0
        # name -> (sum, count) over scored rows per example run (below): a metric's error bar is
        # clustered by example too; arrays, not a dict per example, so a long run stays small
        self._metric_runs: dict[str, tuple[array[float], array[int]]] = {}
        self.errors: Counter[Any] = Counter()
        self.stop_reasons: Counter[str] = Counter()
        self.prompt_tokens = 0
        self.completion_tokens = 0
        # Per example, as runs of consecutive rows: id, scored rollouts, reward sum, passing.
        self._example_ids: list[Any] = []
        self._scored = array("q")
        self._reward_sum = array("d")
        self._passed = array("q")

    def add_all(self, rows: Iterable[dict[str, Any]]) -> RowAggregate:
        for row in rows:
            self.add(row)
        return self

    def add(self, row: dict[str, Any]) -> None:
        self.num_rollouts += 1
        err = row.get("error")
        if err:
            self.errors[err.get("category") if isinstance(err, dict) else None] += 1
        self.stop_reasons[str(row.get("stop_reason") or "none")] += 1
        usage = row.get("usage") or {}
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)
        eid = row.get("example_id")
        if not self._example_ids or self._example_ids[-1] != eid:
            self._example_ids.append(eid)
            self._scored.append(0)
            self._reward_sum.append(0.0)
            self._passed.append(0)
        if not is_scored(row):
            return
        reward = float(row["reward"])
        self.num_scored += 1
        self._reward_total += reward
        run = len(self._example_ids) - 1
        for name, value in (row.get("metrics") or {}).items():
            if value is not None:
                sums, counts = self._metric_runs.setdefault(name, (array("d"), array("q")))
                if len(sums) <= run:  # a metric not seen since an earlier example: catch up
                    sums.extend([0.0] * (run + 1 - len(sums)))
                    counts.extend([0] * (run + 1 - len(counts)))
                sums[run] += float(value)
                counts[run] += 1
        self._scored[-1] += 1
        self._reward_sum[-1] += reward
        self._passed[-1] += self.criterion.passes(row)

    def reward_estimate(self) -> Estimate:
        """Mean reward over scored rollouts with its standard error clustered by example and 95%
        interval (``verifiers_lite.stats``)."""
        from verifiers_lite.stats import estimate_from_totals  # numpy/scipy: when a figure is asked

        per = [(n, s) for n, s, _ in self.per_example().values() if n]
        e = estimate_from_totals([s for _, s in per], [n for n, _ in per])
        if not self.num_scored:
            return e
        mean = self._reward_total / self.num_scored  # the plain sum, as a mean over a list would be
        half = (e.ci[1] - e.ci[0]) / 2
        return replace(e, mean=mean, ci=(mean - half, mean + half))

    def metric_estimates(self) -> dict[str, Estimate]:
        """Each metric's mean over the scored rollouts that have it, with its clustered error bar."""
        from verifiers_lite.stats import estimate_from_totals

        out = {}
        for name, (sums, counts) in self._metric_runs.items():
            per = [(s, n) for s, n in self._by_example(sums, counts).values() if n]
            out[name] = estimate_from_totals([s for s, _ in per], [n for _, n in per])
        return out

    def _by_example(self, *columns: Sequence[float]) -> dict[Any, tuple[Any, ...]]:
        """Per-run columns summed per example, in first-seen order (an example's rows may come
        in several runs: independent scoring, a resume)."""
        out: dict[Any, tuple[Any, ...]] = {}
        for i, eid in enumerate(self._example_ids[: min(map(len, columns))]):
            here = tuple(col[i] for col in columns)
            seen = out.get(eid)
            out[eid] = here if seen is None else tuple(a + b for a, b in zip(seen, here, strict=True))
        return out

    def per_example(self) -> dict[Any, tuple[int, float, int]]:
        """example_id -> (scored rollouts, reward sum, passing rollouts), in first-seen order."""
        return cast(dict[Any, tuple[int, float, int]], self._by_example(self._scored, self._reward_sum, self._passed))

    def pass_counts(self) -> list[tuple[int, int]]:
        """(scored, passing) per example with a scored rollout: pass@k's input."""
        return [(n, p) for n, _, p in self.per_example().values() if n]

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
        }
