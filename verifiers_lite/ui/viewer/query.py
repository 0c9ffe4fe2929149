"""Filtering, sorting and statistics over a :class:`RowIndex` (columns only, rows stay on disk)."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from verifiers_lite.core import columns
from verifiers_lite.core.errors import ERROR_CATEGORIES
from verifiers_lite.core.pass_criterion import PassCriterion
from verifiers_lite.core.state import STOP_REASONS
from verifiers_lite.core.summary import cost_line
from verifiers_lite.results.metrics import pass_at_k_from_counts
from verifiers_lite.results.paired import ExampleScore, example_key
from verifiers_lite.results.row_index import RowIndex
from verifiers_lite.ui.viewer.rows import row_text

HIST_BINS = 20
_SCAN_BATCH = 2048


@dataclass(frozen=True)
class RowFilter:
    """What the Rollouts table shows; ``check`` names any bad value (a 422 for the API)."""

    sort: str = ""
    q: str = ""
    error: str = ""
    stop_reason: str = ""
    example_id: str | None = None
    min_reward: float | None = None
    max_reward: float | None = None
    metric: str = ""
    min_metric: float | None = None
    max_metric: float | None = None
    #: other columns' ranges (``core.columns``' range filters): (name, min, max)
    ranges: tuple[tuple[str, float | None, float | None], ...] = ()

    @property
    def all_ranges(self) -> tuple[tuple[str, float | None, float | None], ...]:
        """Every range asked for, the reward's included."""
        reward = (("reward", self.min_reward, self.max_reward),)
        wanted = reward if self.min_reward is not None or self.max_reward is not None else ()
        return (*wanted, *self.ranges)

    @property
    def is_plain(self) -> bool:
        """No filter and no sort: a page can be served before the whole file is indexed (in
        file order until then, in example order once the index is whole)."""
        return self == RowFilter()

    def check(self, index: RowIndex) -> None:
        bounds = [
            (f"{e}_{name}", v)
            for name, lo, hi in self.all_ranges
            for e, v in (("min", lo), ("max", hi))
        ]
        for name, value in (
            *bounds,
            ("min_metric", self.min_metric),
            ("max_metric", self.max_metric),
        ):
            if value is not None and math.isnan(value):
                raise ValueError(f"{name} must be a number, got nan")
        for name, _, _ in self.all_ranges:
            if name not in index.cols.values:
                raise ValueError(f"no range filter on {name!r}")
        key = self.sort.removeprefix("-")
        sortable = sort_fields()
        if key and key not in sortable and key not in index.cols.metrics:
            raise ValueError(
                f"sort must be one of {', '.join(sortable)} or a metric of this run "
                f"({', '.join(index.cols.metrics) or 'none'}), optionally prefixed by '-'; got {self.sort!r}"
            )
        known = {"any", "none", "unknown", *ERROR_CATEGORIES, *(n for n in index.error_names if n)}
        if self.error and self.error not in known:
            raise ValueError(
                f"error must be 'any', 'none' or an error category ({', '.join(ERROR_CATEGORIES)}); got {self.error!r}"
            )
        stops = {*STOP_REASONS, *(n for n in index.stop_names if n)}
        if self.stop_reason and self.stop_reason not in stops:
            raise ValueError(
                f"stop_reason must be one of {', '.join(sorted(stops))}; got {self.stop_reason!r}"
            )
        if (self.min_metric is not None or self.max_metric is not None) and not self.metric:
            raise ValueError("min_metric/max_metric need metric=NAME")
        if self.metric and self.metric not in index.cols.metrics:
            raise ValueError(
                f"metric {self.metric!r} is not a metric of this run ({', '.join(index.cols.metrics) or 'none'})"
            )


def sort_fields() -> tuple[str, ...]:
    """The columns the Rollouts table sorts on (``core.columns``); a run's metrics too."""
    return columns.current().sortable


def _in_range(v: float, lo: float | None, hi: float | None) -> bool:
    return not math.isnan(v) and (lo is None or v >= lo) and (hi is None or v <= hi)


def select(index: RowIndex, f: RowFilter) -> list[int]:
    """Positions of the rows matching ``f``, in ``f.sort`` order; by default by example, then
    rollout, as a run's outputs are (file order only while a large file is still being
    indexed, so its first page comes at once)."""
    cols = index.cols
    pos: list[int] = list(range(len(cols.offset)))
    if f.error == "any":
        pos = [i for i in pos if cols.error[i]]
    elif f.error == "none":
        pos = [i for i in pos if not cols.error[i]]
    elif f.error:
        code = index.error_names.index(f.error) if f.error in index.error_names else -1
        pos = [i for i in pos if cols.error[i] == code]
    if f.stop_reason:
        code = index.stop_names.index(f.stop_reason) if f.stop_reason in index.stop_names else -1
        pos = [i for i in pos if cols.stop[i] == code]
    if f.example_id is not None:
        pos = sorted(set(pos).intersection(index.positions_of(f.example_id)))
    for name, lo, hi in f.all_ranges:
        values = cols.values[name]
        pos = [i for i in pos if _in_range(values[i], lo, hi)]
    if f.metric and (f.min_metric is not None or f.max_metric is not None):
        col = cols.metrics[f.metric]
        pos = [i for i in pos if _in_range(col[i], f.min_metric, f.max_metric)]
    if f.q.strip():
        pos = _search(index, pos, f.q.strip())
    if f.sort or index.at_eof:
        pos = _sorted(index, pos, f.sort or "example_id")
    return pos


def _search(index: RowIndex, pos: list[int], q: str) -> list[int]:
    """Rows whose messages, tool calls, answer, error or info contain ``q`` (case-insensitive).
    A raw-bytes pre-filter skips parsing lines that cannot match; it is exact only for text that
    JSON writes verbatim, so queries with quotes, backslashes or non-ASCII skip it."""
    needle = q.casefold()
    raw_ok = q.isascii() and q.isprintable() and '"' not in q and "\\" not in q
    raw = needle.encode()
    out: list[int] = []
    for start in range(0, len(pos), _SCAN_BATCH):
        batch = pos[start : start + _SCAN_BATCH]
        lines = index.raw_lines(batch)
        for i, line in zip(batch, lines, strict=True):
            if raw_ok and raw not in line.lower():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if needle in row_text(row).casefold():
                out.append(i)
    return out


def _sorted(index: RowIndex, pos: list[int], sort: str) -> list[int]:
    """Sorted by one field; rows without a value (unscored, no metric) come last either way."""
    desc = sort.startswith("-")
    key = sort.removeprefix("-")
    cols = index.cols
    if key == "example_id":

        def eid(i: int) -> tuple[int, Any, int]:
            v = cols.example_id[i]
            return (
                (0, v, 0)
                if isinstance(v, (int, float)) and not isinstance(v, bool)
                else (1, str(v), 0)
            )

        return sorted(pos, key=lambda i: (eid(i), cols.rollout_index[i]), reverse=desc)
    column: Any = cols.metrics[key] if key in cols.metrics else cols.values[key]
    present = [i for i in pos if not (isinstance(column[i], float) and math.isnan(column[i]))]
    missing = [i for i in pos if isinstance(column[i], float) and math.isnan(column[i])]
    return sorted(present, key=lambda i: column[i], reverse=desc) + missing


def _histogram(values: list[float]) -> list[dict[str, Any]]:
    """One bar per distinct value when there are few (0/1 rewards), else HIST_BINS even bins."""
    if not values:
        return []
    distinct = Counter(values)
    if len(distinct) <= 12:
        return [{"lo": v, "hi": v, "count": c} for v, c in sorted(distinct.items())]
    lo, hi = min(values), max(values)
    width = (hi - lo) / HIST_BINS
    counts = [0] * HIST_BINS
    for v in values:
        counts[min(int((v - lo) / width), HIST_BINS - 1)] += 1
    return [
        {"lo": lo + k * width, "hi": lo + (k + 1) * width, "count": c} for k, c in enumerate(counts)
    ]


def run_stats(index: RowIndex, criterion: PassCriterion) -> dict[str, Any]:
    """Summary of the indexed rows: the run's summary (:class:`~verifiers_lite.core.summary.RunSummary`,
    the figures a run writes and its live display shows: reward mean ± stderr clustered by
    example and its 95% interval over scored rollouts, per-metric means, errors and stop reasons,
    tokens and timing), with the reward histogram and pass@k under ``criterion``."""
    summary = index.summary_figures()
    cols = index.cols
    n = min(len(cols.offset), summary["num_rollouts"])
    scored = [i for i in range(n) if not math.isnan(cols.reward[i])]
    return {
        **summary,
        "num_examples": len({str(cols.example_id[i]) for i in range(n)}),
        "reward_histogram": _histogram([cols.reward[i] for i in scored]),
        "pass_at_k": _pass_at_k(index, scored, criterion),
        "pass_criterion": criterion.describe(),
        "mean_rollout_ms": summary["timing_ms"].get("rollout_ms"),
        "cost": cost_line(summary, per_reward=True),  # "unpriced" when no row is priced
        "metric_names": list(cols.metrics),
        "error_categories": [n for n in index.error_names if n],
        "stop_reason_names": [n for n in index.stop_names if n],
    }


def _pass_at_k(index: RowIndex, scored: list[int], criterion: PassCriterion) -> dict[str, float]:
    """pass@k at k = 1, 2, 4, ... up to the smallest scored group (the library's estimator over
    per-example counts of scored and passing rollouts)."""
    cols = index.cols
    values = cols.reward if criterion.metric == "reward" else cols.metrics.get(criterion.metric)
    counts: dict[Any, list[int]] = defaultdict(lambda: [0, 0])
    for i in scored:
        acc = counts[cols.example_id[i]]
        acc[0] += 1
        if values is not None and values[i] >= criterion.threshold:  # NaN compares False
            acc[1] += 1
    kmax = min((n for n, _ in counts.values()), default=0)
    ks = sorted(
        {k for k in (1, 2, 4, 8, 16, 32, 64, 128) if k <= kmax} | ({kmax} if kmax else set())
    )
    pairs = [(n, c) for n, c in counts.values()]
    return {str(k): pass_at_k_from_counts(pairs, k) for k in ks}


def example_scores(index: RowIndex, few_shot: Any = None) -> dict[str, ExampleScore]:
    """Per example id (as text): summed reward and count of scored rollouts, rollouts in all,
    and the key of its input (read from its first row; the run's ``few_shot`` turns left out),
    for comparing runs."""
    cols = index.cols
    out: dict[str, ExampleScore] = {}
    first: dict[str, int] = {}
    for i in range(len(cols.offset)):
        e = str(cols.example_id[i])
        score = out.get(e)
        if score is None:
            score, first[e] = out.setdefault(e, ExampleScore()), i
        score.rollouts += 1
        r = cols.reward[i]
        if not math.isnan(r):
            score.reward_sum += r
            score.scored += 1
    for e, row in zip(first, index.read(list(first.values())), strict=True):
        out[e].key = example_key(row, few_shot)
    return out


def compare_examples(scores: list[dict[str, ExampleScore]]) -> list[dict[str, Any]]:
    """Per-example mean reward of each run and its difference (last - first for two runs, else
    max - min), largest difference first; examples missing or unscored in a run come last."""

    def order(e: str) -> tuple[int, int, str]:
        digits = e.lstrip("-").isdigit()
        return (0 if digits else 1, int(e) if digits else 0, e)

    out: list[dict[str, Any]] = []
    for e in sorted(set().union(*scores), key=order):
        vals = [m[e].mean if e in m else math.nan for m in scores]
        present = [v for v in vals if not math.isnan(v)]
        if len(vals) == 2:  # noqa: SIM108  (a nested conditional expression reads worse)
            diff = vals[1] - vals[0]
        else:
            diff = max(present) - min(present) if len(present) > 1 else math.nan
        out.append(
            {
                "example_id": e,
                "means": vals,
                "counts": [m[e].scored if e in m else 0 for m in scores],
                "diff": diff,
            }
        )
    out.sort(
        key=lambda x: (math.isnan(x["diff"]), -abs(x["diff"]) if not math.isnan(x["diff"]) else 0.0)
    )
    return out
