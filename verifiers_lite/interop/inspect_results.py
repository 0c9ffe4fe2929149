"""A run's results in an inspect log: for each score, inspect's own ``mean`` and ``stderr``
metrics, computed as inspect computes them (each sample's epochs reduced to their mean, then the
metric over samples), beside this library's mean with its standard error clustered by example
and its 95% interval (``clustered_stderr``, ``ci_low``, ``ci_high``) over all rollouts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from verifiers_lite.core.records import Row
from verifiers_lite.interop.inspect_extra import inspect_module
from verifiers_lite.interop.inspect_scores import score_float, score_table
from verifiers_lite.stats.error_bars import clustered_mean


def score_values(rows: Iterable[Row]) -> dict[str, list[tuple[Any, float]]]:
    """Per score name (first-seen order), each scored rollout's (example id, value as a number)."""
    values: dict[str, list[tuple[Any, float]]] = {}
    for row in rows:
        for name, score in (score_table(row) or {}).items():
            values.setdefault(name, []).append((row.get("example_id"), score_float(score.value)))
    return values


def inspect_metrics(pairs: list[tuple[Any, float]]) -> dict[str, float]:
    """Inspect's ``mean`` and ``stderr`` of one score: epochs reduced by their mean per sample,
    then inspect's own metric functions over the samples."""
    s = inspect_module("inspect_ai.scorer")
    per_sample: dict[Any, list[float]] = {}
    for sample_id, value in pairs:
        per_sample.setdefault(sample_id, []).append(value)
    reduced = [
        s.SampleScore(score=s.Score(value=sum(v) / len(v)), sample_id=sid)
        for sid, v in per_sample.items()
    ]
    return {"mean": float(s.mean()(reduced)), "stderr": float(s.stderr()(reduced))}


def _metric(name: str, value: float) -> Any:
    return inspect_module("inspect_ai.log").EvalMetric(name=name, value=value)


def eval_results(rows: Sequence[Row]) -> Any:
    """The log's ``EvalResults``: a score entry per score name, inspect's metrics first."""
    log = inspect_module("inspect_ai.log")
    entries = []
    for name, pairs in score_values(rows).items():
        figures = inspect_metrics(pairs)
        clustered = clustered_mean([v for _, v in pairs], [sid for sid, _ in pairs])
        figures |= {
            "clustered_mean": clustered.mean,
            "clustered_stderr": clustered.stderr,
            "ci_low": clustered.ci[0],
            "ci_high": clustered.ci[1],
        }
        entries.append(
            log.EvalScore(
                name=name,
                scorer=name,
                scored_samples=len({sid for sid, _ in pairs}),
                metrics={k: _metric(k, v) for k, v in figures.items()},
            )
        )
    return log.EvalResults(
        total_samples=len(rows),
        completed_samples=sum(1 for row in rows if not row.get("error")),
        scores=entries,
    )
