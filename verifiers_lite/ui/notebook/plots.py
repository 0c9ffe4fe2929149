"""Reward plots for one run or several compared: distributions, reward vs turns, pass@k,
advantages. Each takes results (``GenerateOutputs``), a DataFrame, or a list/dict of either,
draws on ``ax`` (or a new figure) and returns the Axes; headless (Agg) outside a display.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from verifiers_lite.core.pass_criterion import PassCriterion
from verifiers_lite.core.records import Row
from verifiers_lite.results.compare import outputs_facts
from verifiers_lite.results.labels import run_labels
from verifiers_lite.results.metrics import pass_at_k_curve
from verifiers_lite.results.outputs import GenerateOutputs
from verifiers_lite.ui.notebook._deps import pyplot

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

FIGSIZE = (8.0, 3.6)  # readable at notebook width without scrolling, legend beside the plot
# Series that coincide (two runs with one pass@k curve) must all stay visible: each later series
# is drawn over the earlier ones with a thinner, broken line and a larger hollow marker.
_LINE_STYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D", "v", "P")


def runs_frame(data: Any) -> pd.DataFrame:
    """One DataFrame for one or many runs, with ``env``, ``model``, ``temperature`` and a
    ``run`` label naming what differs between runs (``vf.compare``'s labels: the task, model,
    an environment or sampling argument)."""
    import pandas as pd  # a core dependency, imported when a plot is drawn

    items = list(data.items()) if isinstance(data, dict) else [(None, d) for d in _as_list(data)]
    frames, metas = [], []
    for name, item in items:
        df, meta = _one_frame(item)
        frames.append(df)
        metas.append((name, meta))
    labels = run_labels([m for _, m in metas], [n for n, _ in metas])
    for df, (_, meta), label in zip(frames, metas, labels, strict=True):
        for k in ("env", "model", "temperature"):
            if k not in df.columns:
                df[k] = meta.get(k)
        if "task" in meta and "task" not in df.columns:
            df["task"] = meta["task"]
        df["run"] = label
    return (
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["reward", "run"])
    )


def _as_list(data: Any) -> list[Any]:
    return list(data) if isinstance(data, (list, tuple)) else [data]


def _one_frame(item: Any) -> tuple[pd.DataFrame, dict[str, Any]]:
    import pandas as pd  # a core dependency, imported when a plot is drawn

    if isinstance(item, pd.DataFrame):
        first = item.iloc[0] if len(item) else {}
        meta = {k: first.get(k) for k in ("env", "model", "temperature")} if len(item) else {}
        return item.copy(), meta
    if isinstance(item, GenerateOutputs):
        facts = outputs_facts(item)
        # The columns a plot splits by: the sampling temperature lives among the sampling args.
        return item.to_pandas(), {**facts, "temperature": facts.get("sampling_args.temperature")}
    raise TypeError(f"expected GenerateOutputs or a DataFrame, got {type(item).__name__}")


def _groups(df: pd.DataFrame, by: str | None) -> list[tuple[str, pd.DataFrame]]:
    # Every series is named: one run by its label (the model), several by what differs.
    key = by or ("run" if "run" in df.columns else None)
    if key is None:
        return [("", df)]
    if key not in df.columns:
        raise KeyError(f"no column {key!r} to group by; columns: {list(df.columns)}")
    return [(f"{by}={k}" if by else str(k), g) for k, g in df.groupby(key, sort=True, dropna=False)]


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    _, ax = pyplot().subplots(figsize=FIGSIZE, layout="constrained")
    return ax


def _legend(ax: Axes) -> None:
    """The legend beside the plot area, never over the data, each swatch on a clear background."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            borderaxespad=0.0,
            fontsize="small",
            frameon=False,
        )


def _series_style(i: int) -> dict[str, Any]:
    """Line and marker of the ``i``-th line series (see ``_LINE_STYLES``)."""
    return {
        "linestyle": _LINE_STYLES[i % len(_LINE_STYLES)],
        "linewidth": max(1.0, 2.4 - 0.5 * i),
        "marker": _MARKERS[i % len(_MARKERS)],
        "markersize": 6 + 3 * i,
        "markerfacecolor": None if i == 0 else "none",
        "markeredgewidth": 1.5,
        "zorder": 2 + i,
    }


def _label(name: str, values: Any) -> str:
    n = len(values)
    mean = float(values.mean()) if n else math.nan
    prefix = f"{name}  " if name else ""
    return f"{prefix}(n={n}, mean={mean:.3f})"


def _numeric_bars(ax: Axes, groups: list[tuple[str, Any]], distinct: list[float]) -> None:
    """Few distinct rewards as bars *at their values* on a numeric axis (0.2 sits near 0, not
    next to 1), side by side per run."""
    span = max(1.0, distinct[-1] - distinct[0])
    gaps = [b - a for a, b in zip(distinct, distinct[1:], strict=False)]
    slot = max(min(gaps) if gaps else span, 0.04 * span) * 0.8  # all runs' bars at one value
    width = slot / max(1, len(groups))
    for i, (name, r) in enumerate(groups):
        fracs = [float((r == v).mean()) if len(r) else 0.0 for v in distinct]
        xs = [v + (i - (len(groups) - 1) / 2) * width for v in distinct]
        ax.bar(xs, fracs, width=width, label=_label(name, r))
    if len(distinct) <= 8 and (not gaps or min(gaps) >= 0.06 * span):
        ax.set_xticks(distinct, [f"{v:g}" for v in distinct])
    ax.set_xlim(distinct[0] - slot, distinct[-1] + slot)


def plot_rewards(
    data: Any, by: str | None = None, kind: str = "hist", ax: Axes | None = None, bins: int = 20
) -> Axes:
    """Reward distribution as a histogram (``kind="hist"``) or ECDF, one series per run or per
    value of column ``by``. Few distinct rewards (e.g. 0/1) are drawn as grouped bars."""
    if kind not in ("hist", "ecdf"):
        raise ValueError(f"kind must be 'hist' or 'ecdf', got {kind!r}")
    df = runs_frame(data)
    ax = _axes(ax)
    groups = [(name, g["reward"].astype(float).dropna()) for name, g in _groups(df, by)]
    if kind == "ecdf":
        for k, (name, r) in enumerate(groups):
            xs = sorted(r)
            ax.step(
                xs,
                [(i + 1) / len(xs) for i in range(len(xs))],
                where="post",
                label=_label(name, r),
                linestyle=_LINE_STYLES[k % len(_LINE_STYLES)],
                linewidth=max(1.0, 2.4 - 0.5 * k),
            )
        ax.set_ylabel("fraction of rollouts ≤ reward")
        ax.set_ylim(0, 1.02)
    else:
        distinct = sorted(set().union(*[set(r) for _, r in groups])) if groups else []
        if 0 < len(distinct) <= 12:
            _numeric_bars(ax, groups, [float(v) for v in distinct])
        else:
            for name, r in groups:
                weights = [1 / len(r)] * len(r) if len(r) else None
                ax.hist(
                    r,
                    bins=bins,
                    weights=weights,
                    alpha=0.5,
                    histtype="stepfilled",
                    edgecolor="black",
                    linewidth=0.6,
                    label=_label(name, r),
                )
        ax.set_ylabel("fraction of rollouts")
    ax.set_xlabel("reward")
    ax.set_title("Reward distribution" + (f" by {by}" if by else ""))
    _legend(ax)
    return ax


def plot_reward_vs_turns(data: Any, by: str | None = None, ax: Axes | None = None) -> Axes:
    """Mean reward at each number of turns some rollout took, with its 95% interval (standard
    error clustered by example, ``vf.stats``; none below two examples): points only, no lines
    through turn counts without rollouts; several runs side by side at each count."""
    df = runs_frame(data)
    ax = _axes(ax)
    groups = _groups(df, by)
    for i, (name, g) in enumerate(groups):
        turns, means, lo, hi = _by_turns(g)
        shift = (i - (len(groups) - 1) / 2) * min(0.1, 0.6 / max(1, len(groups)))
        ax.errorbar(
            [t + shift for t in turns],
            means,
            yerr=[lo, hi],
            fmt="o",
            capsize=3,
            label=_label(name, g["reward"]),
        )
    ax.set_xlabel("turns")
    ax.set_ylabel("mean reward")
    ax.set_title("Reward vs turns")
    ax.xaxis.get_major_locator().set_params(integer=True)  # type: ignore[call-arg]  # MaxNLocator
    _legend(ax)
    return ax


def _by_turns(g: pd.DataFrame) -> tuple[list[int], list[float], list[float], list[float]]:
    """Per turn count: mean reward and the distances down and up to its 95% interval ends."""
    from verifiers_lite.stats.error_bars import clustered_mean

    turns, means, lo, hi = [], [], [], []
    ids = g["example_id"] if "example_id" in g.columns else None
    for t, part in g.groupby("turns", sort=True):
        rewards = part["reward"].astype(float)
        e = clustered_mean(rewards.tolist(), None if ids is None else ids[part.index].tolist())
        if math.isnan(e.mean):
            continue
        turns.append(int(t))
        means.append(e.mean)
        lo.append(0.0 if math.isnan(e.ci[0]) else e.mean - e.ci[0])
        hi.append(0.0 if math.isnan(e.ci[1]) else e.ci[1] - e.mean)
    return turns, means, lo, hi


def plot_pass_at_k(
    data: Any,
    by: str | None = None,
    threshold: float | None = None,
    ax: Axes | None = None,
    criterion: PassCriterion | str | float | None = None,
) -> Axes:
    """pass@k for k = 1 .. group size (unbiased estimator over each example's scored rollouts).

    A rollout passes under ``criterion`` (a metric name, a reward threshold or a
    :class:`PassCriterion`), else reward >= ``threshold``, else the run's own pass criterion
    (one ``GenerateOutputs``), else reward >= 1.
    """
    crit = _pass_criterion(data, threshold, criterion)
    df = runs_frame(data)
    ax = _axes(ax)
    for i, (name, g) in enumerate(_groups(df, by)):
        metric = g[crit.metric] if crit.metric != "reward" and crit.metric in g.columns else None
        records: list[Row] = [
            {
                "example_id": eid,
                "reward": reward,
                "metrics": {crit.metric: None if metric is None else metric.iloc[i]},
            }
            for i, (eid, reward) in enumerate(zip(g["example_id"], g["reward"], strict=True))
        ]
        curve = pass_at_k_curve(records, criterion=crit)
        ax.plot(
            list(curve), list(curve.values()), label=name or crit.describe(), **_series_style(i)
        )
    ax.set_xlabel("k (samples per example)")
    ax.set_ylabel("pass@k")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"pass@k (passes when {crit.describe()})")
    ax.xaxis.get_major_locator().set_params(integer=True)  # type: ignore[call-arg]  # MaxNLocator
    _legend(ax)
    return ax


def _pass_criterion(data: Any, threshold: float | None, criterion: Any) -> PassCriterion:
    if criterion is not None:
        return PassCriterion.coerce(criterion)
    if threshold is not None:
        return PassCriterion("reward", float(threshold))
    return data.pass_criterion if isinstance(data, GenerateOutputs) else PassCriterion()


def plot_advantages(
    data: Any, by: str | None = None, ax: Axes | None = None, bins: int = 21
) -> Axes:
    """Distribution of group advantages (reward − group mean); zero-advantage groups carry no
    training signal, so their share is given in the legend."""
    df = runs_frame(data)
    ax = _axes(ax)
    for name, g in _groups(df, by):
        adv = g["advantage"].astype(float).dropna()
        zero = float((adv.abs() < 1e-9).mean()) if len(adv) else math.nan
        weights = [1 / len(adv)] * len(adv) if len(adv) else None
        ax.hist(
            adv,
            bins=bins,
            weights=weights,
            alpha=0.5,
            histtype="stepfilled",
            edgecolor="black",
            linewidth=0.6,
            label=f"{name + '  ' if name else ''}(n={len(adv)}, zero={zero:.0%})",
        )
    ax.axvline(0, color="gray", linewidth=0.8, linestyle="--")
    ax.set_xlabel("advantage (reward − group mean)")
    ax.set_ylabel("fraction of rollouts")
    ax.set_title("Advantage distribution")
    _legend(ax)
    return ax
