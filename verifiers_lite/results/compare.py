"""Compare runs side by side: one flat DataFrame row per run."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from verifiers_lite.core.pass_criterion import PassCriterion
from verifiers_lite.core.summary import cost_per_reward
from verifiers_lite.results.labels import run_facts, run_labels
from verifiers_lite.results.metrics import pass_at_k_curve_from_counts
from verifiers_lite.results.run_metadata import RunMetadata
from verifiers_lite.results.sessions import run_duration

if TYPE_CHECKING:
    import pandas as pd

    from verifiers_lite.results.outputs import GenerateOutputs

# Left out of the default view (``details=False``): the ``run`` label already names what differs,
# and counts by kind, metric means and the middle of the pass@k curve are the details.
_DETAIL_COLUMNS = (
    "env",
    "model",
    "temperature",
    "scored",
    "completion_tokens_per_rollout",
    "wall_time_s",
    "cost_usd_total",
    "cost_usd_mean",
)
_DETAIL_PREFIXES = ("metric:", "error:", "stop:")


def as_outputs(run: Any, caller: str = "compare()") -> GenerateOutputs:
    """A run given as ``GenerateOutputs`` or as a run directory, loaded; TypeError otherwise,
    FileNotFoundError naming a directory that holds no run."""
    from verifiers_lite.results.outputs import GenerateOutputs, load_results

    if isinstance(run, (str, os.PathLike)):
        run = load_results(run)
    if not isinstance(run, GenerateOutputs):
        raise TypeError(
            f"{caller} takes GenerateOutputs or run directories, got {type(run).__name__}"
        )
    return run


def outputs_facts(run: GenerateOutputs) -> dict[str, Any]:
    """:func:`~verifiers_lite.results.labels.run_facts` of a run, its first row's system message
    standing in for a prompt template the run did not record."""
    first = (
        run.rows[0].get("prompt")
        if len(run.rows) and "prompt_template" not in run.metadata
        else None
    )
    return run_facts(run.metadata, first)


def _columns(metadata: RunMetadata) -> dict[str, Any]:
    """The ``env``, ``model`` and ``temperature`` columns of a run."""
    return {
        "env": metadata.get("env_id"),
        "model": metadata.get("model"),
        "temperature": (metadata.get("sampling_args") or {}).get("temperature"),
    }


def compare(runs: Any, ks: list[int] | None = None, details: bool = False) -> pd.DataFrame:
    """One row per run, flat columns. By default a compact view that fits a notebook: ``run``
    (named by what differs between the runs: a task of ``out.by_task()``, ``temperature=0.2``, an
    environment argument, the model), rollouts, ``reward_mean``, ``reward_stderr`` (clustered by
    example), ``reward_ci_low``/``reward_ci_high`` (95%; NaN with the reason in
    ``reward_ci_undefined`` for a run of one example or without variance), pass@1 and pass@n (n the group size) and
    ``errors``. ``details=True`` adds env, model, temperature, scored, each metric's mean
    (``metric:NAME``), every ``pass@k`` (k = 1, 2, 4, ... up to the group size, or ``ks``; under
    each run's pass criterion), ``error:CATEGORY`` and ``stop:REASON`` counts, tokens per rollout
    and wall time.

    ``runs``: a list of results (``GenerateOutputs`` or run directories), or a dict of
    name -> results to name them yourself. Automatic names say what differs: the model, an
    environment or sampling argument, the system prompt (its first words, or a short hash when
    two open alike), the few-shot turns, the rubric (its functions and weights, or its code),
    ``rescored`` vs ``original``.
    """
    import pandas as pd

    items = list(runs.items()) if isinstance(runs, dict) else [(None, r) for r in _as_list(runs)]
    if not items:
        raise ValueError("compare() needs at least one run")
    loaded = [(name, as_outputs(r)) for name, r in items]
    labels = run_labels([outputs_facts(r) for _, r in loaded], [n for n, _ in loaded])
    df = pd.DataFrame([_row(label, r, ks) for label, (_, r) in zip(labels, loaded, strict=True)])
    counts = [c for c in df.columns if c.startswith(("error:", "stop:"))]
    df[counts] = df[counts].fillna(0).astype(int)  # a category one run never hit is a count of 0
    if df["reward_ci_undefined"].isna().all():
        df = df.drop(columns="reward_ci_undefined")  # every interval is defined: nothing to explain
    return df if details else df[_summary_columns(list(df.columns), ks)]


def _summary_columns(columns: list[str], ks: list[int] | None) -> list[str]:
    """The compact view: every column but the details; of pass@k, the first and last k (or the
    ``ks`` asked for)."""
    passes = [c for c in columns if c.startswith("pass@")]
    shown_passes = passes if ks else passes[:1] + passes[-1:]
    return [
        c
        for c in columns
        if c not in _DETAIL_COLUMNS
        and not c.startswith(_DETAIL_PREFIXES)
        and (not c.startswith("pass@") or c in shown_passes)
    ]


def _as_list(runs: Any) -> list[Any]:
    return list(runs) if isinstance(runs, (list, tuple)) else [runs]


def _row(label: str, outputs: GenerateOutputs, ks: list[int] | None) -> dict[str, Any]:
    md = outputs.metadata
    agg = outputs.aggregate(PassCriterion.coerce(md.get("pass_criterion")))
    s = agg.summary()
    n = max(1, s["num_rollouts"])
    row: dict[str, Any] = {
        "run": label,
        **_columns(md),
        "rollouts": s["num_rollouts"],
        "scored": s["num_scored"],
        "reward_mean": s["reward_mean"],
        "reward_stderr": s["reward_stderr"],
        "reward_ci_low": s["reward_ci"][0],
        "reward_ci_high": s["reward_ci"][1],
        "reward_ci_undefined": s["reward_ci_undefined"],
    }
    row.update({f"metric:{k}": v for k, v in s["metrics_mean"].items()})
    group = int(md.get("rollouts_per_example") or 1)
    curve = pass_at_k_curve_from_counts(agg.pass_counts())
    wanted = ks or [k for k in (1, 2, 4, 8, 16, 32, 64, 128) if k < group] + [group]
    row.update({f"pass@{k}": curve.get(k, float("nan")) for k in wanted})
    row["errors"] = s["num_errors"]
    row.update({f"error:{k}": v for k, v in sorted(s["errors"].items())})
    row.update({f"stop:{k}": v for k, v in s["stop_reasons"].items()})
    row["completion_tokens_per_rollout"] = s["completion_tokens"] / n
    # None: unpriced (never 0); the embedded model's runs cost 0
    row["cost_usd_total"] = s["cost_usd_total"]
    row["cost_usd_mean"] = s["cost_usd_mean"]
    row["cost_per_reward"] = cost_per_reward(s)
    row["wall_time_s"] = run_duration(md)  # summed over sessions when the run was resumed
    return row
