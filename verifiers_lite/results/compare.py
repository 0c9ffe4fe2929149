"""Compare runs side by side: one flat DataFrame row per run."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from verifiers_lite.results.metrics import PassCriterion, pass_at_k_curve_from_counts

if TYPE_CHECKING:
    import pandas as pd

    from verifiers_lite.results.outputs import GenerateOutputs

_LABEL_KEYS = ("env", "model", "temperature")


def run_facts(outputs: GenerateOutputs) -> dict[str, Any]:
    """``env``, ``model`` and ``temperature`` of a run, from its metadata."""
    md = outputs.metadata
    return {"env": md.get("env_id"), "model": md.get("model"),
            "temperature": (md.get("sampling_args") or {}).get("temperature")}


def run_labels(facts: list[dict[str, Any]], names: list[str | None]) -> list[str]:
    """A name per run: the given one, else what differs between the runs (env, model,
    temperature), else the model (one run) or ``run i``."""
    varying = [k for k in _LABEL_KEYS if len({str(f.get(k)) for f in facts}) > 1]
    labels = []
    for i, (f, name) in enumerate(zip(facts, names, strict=True)):
        label = name or ", ".join(f"{k}={f.get(k)}" if k == "temperature" else str(f.get(k)) for k in varying)
        labels.append(label or (f"run {i + 1}" if len(facts) > 1 else str(f.get("model") or "run")))
    return labels


def compare(runs: Any, ks: list[int] | None = None) -> pd.DataFrame:
    """One row per run, flat columns: ``run``, env, model, temperature, rollouts, scored,
    ``reward_mean``/``reward_stderr``, each metric's mean (``metric:NAME``), ``pass@k`` (k = 1,
    2, 4, ... up to the group size, or ``ks``; under each run's pass criterion),
    ``errors`` and ``error:CATEGORY``, ``stop:REASON`` counts, tokens per rollout and wall time.

    ``runs``: a list of results (``GenerateOutputs`` or run directories), or a dict of
    name -> results to name them yourself.
    """
    import pandas as pd

    from verifiers_lite.results.export import load_results

    items = list(runs.items()) if isinstance(runs, dict) else [(None, r) for r in _as_list(runs)]
    if not items:
        raise ValueError("compare() needs at least one run")
    loaded = []
    for name, r in items:
        if isinstance(r, (str, os.PathLike)):
            r = load_results(r)
        if not (hasattr(r, "rows") and hasattr(r, "metadata")):
            raise TypeError(f"compare() takes GenerateOutputs or run directories, got {type(r).__name__}")
        loaded.append((name, r))
    labels = run_labels([run_facts(r) for _, r in loaded], [n for n, _ in loaded])
    df = pd.DataFrame([_row(label, r, ks) for label, (_, r) in zip(labels, loaded, strict=True)])
    counts = [c for c in df.columns if c.startswith(("error:", "stop:"))]
    df[counts] = df[counts].fillna(0).astype(int)  # a category one run never hit is a count of 0
    return df


def _as_list(runs: Any) -> list[Any]:
    return list(runs) if isinstance(runs, (list, tuple)) else [runs]


def _row(label: str, outputs: GenerateOutputs, ks: list[int] | None) -> dict[str, Any]:
    md = outputs.metadata
    agg = outputs.aggregate(PassCriterion.coerce(md.get("pass_criterion")))
    s = agg.summary()
    n = max(1, s["num_rollouts"])
    row: dict[str, Any] = {"run": label, **run_facts(outputs), "rollouts": s["num_rollouts"],
                           "scored": s["num_scored"], "reward_mean": s["reward_mean"],
                           "reward_stderr": s["reward_stderr"]}
    row.update({f"metric:{k}": v for k, v in s["metrics_mean"].items()})
    group = int(md.get("rollouts_per_example") or 1)
    curve = pass_at_k_curve_from_counts(agg.pass_counts())
    wanted = ks or [k for k in (1, 2, 4, 8, 16, 32, 64, 128) if k < group] + [group]
    row.update({f"pass@{k}": curve.get(k, float("nan")) for k in wanted})
    row["errors"] = s["num_errors"]
    row.update({f"error:{k}": v for k, v in sorted(s["errors"].items())})
    row.update({f"stop:{k}": v for k, v in s["stop_reasons"].items()})
    row["completion_tokens_per_rollout"] = s["completion_tokens"] / n
    start, end = md.get("start_time"), md.get("end_time")
    row["wall_time_s"] = end - start if isinstance(start, (int, float)) and isinstance(end, (int, float)) else None
    return row
