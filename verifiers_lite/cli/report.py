"""What ``vf-lite eval`` prints and writes after a run: the summary table and a reward histogram."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from verifiers_lite._util.extras import require
from verifiers_lite.core.pass_criterion import PassCriterion
from verifiers_lite.core.progress import format_stop_reasons, format_timing, length_warning
from verifiers_lite.core.records import Row
from verifiers_lite.core.summary import RunSummary, cost_line
from verifiers_lite.core.tracebacks import ToolTracebacks
from verifiers_lite.results.metrics import pass_at_k_from_counts


def pass_at_k_ks(rollouts_per_example: int) -> list[int]:
    """The k shown: every k up to 8, beyond that powers of two and the group size itself."""
    if rollouts_per_example <= 8:
        return list(range(1, rollouts_per_example + 1))
    ks = [k for k in (1, 2, 4, 8, 16, 32, 64, 128) if k < rollouts_per_example]
    return [*ks, rollouts_per_example]


def run_summary(
    rows: list[Row],
    rollouts_per_example: int,
    wall_s: float,
    pass_criterion: PassCriterion | None = None,
) -> dict[str, Any]:
    """Everything the table shows, as JSON-friendly data (also saved as summary.json). pass@k
    is over scored rollouts under ``pass_criterion`` (the environment's; default reward >= 1)."""
    crit = pass_criterion or PassCriterion()
    agg = RunSummary(crit).add_all(rows)  # one pass: rows may be read from disk
    s = agg.summary()
    n = max(1, s["num_rollouts"])
    out: dict[str, Any] = {
        **s,
        "num_examples": len(agg.per_example()),
        "rollouts_per_example": rollouts_per_example,
        "wall_time_s": wall_s,
        "rollouts_per_s": s["num_rollouts"] / wall_s if wall_s > 0 else None,
        "prompt_tokens_per_rollout": s["prompt_tokens"] / n,
        "completion_tokens_per_rollout": s["completion_tokens"] / n,
        "pass_criterion": crit.to_dict(),
        "pass_at_k": {},
    }
    if rollouts_per_example > 1:
        counts = agg.pass_counts()
        out["pass_at_k"] = {
            k: pass_at_k_from_counts(counts, k) for k in pass_at_k_ks(rollouts_per_example)
        }
    return out


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.{digits}f}"


def _with_interval(mean: float | None, stderr: float | None, ci: Any) -> str:
    """``0.600 ± 0.135  95% CI [0.295, 0.905]``; the mean and why there is no interval."""
    from verifiers_lite.stats.error_bars import format_estimate

    return format_estimate(mean, stderr, ci, table=True)


def _scored_note(summary: dict[str, Any]) -> str:
    """What the reward is a mean over, when some rollouts errored and were not scored."""
    scored = summary.get("num_scored", summary["num_rollouts"])
    if scored == summary["num_rollouts"]:
        return ""
    return (
        f" over the {scored} scored of {summary['num_rollouts']}; errored rollouts are not scored"
    )


def _tokens_value(summary: dict[str, Any]) -> str:
    """Prompt and completion tokens, in all and per rollout, and the reasoning share."""
    reasoning = summary.get("reasoning_tokens")
    return (
        f"prompt {summary['prompt_tokens']:,} ({summary['prompt_tokens_per_rollout']:.0f}/rollout), "
        f"completion {summary['completion_tokens']:,} "
        f"({summary['completion_tokens_per_rollout']:.0f}/rollout)"
        + (f", of which reasoning {reasoning:,}" if reasoning else "")
    )


def format_table(summary: dict[str, Any], header: str, paths: dict[str, str | None]) -> str:
    """The plain-text summary table printed at the end of a run."""
    lines = [header, "-" * min(100, max(40, len(header)))]

    def row(label: str, value: str) -> None:
        lines.append(f"{label:<22}{value}")

    row(
        "rollouts",
        f"{summary['num_rollouts']} ({summary['num_examples']} examples x "
        f"{summary['rollouts_per_example']})",
    )
    over = _scored_note(summary)
    row(
        "reward",
        _with_interval(summary["reward_mean"], summary["reward_stderr"], summary["reward_ci"])
        + f"  (mean ± stderr clustered by example{over})",
    )
    for name, value in summary["metrics_mean"].items():
        row(
            f"  {name}",
            _with_interval(
                value, summary["metrics_stderr"].get(name), summary["metrics_ci"].get(name)
            ),
        )
    crit = PassCriterion.coerce(summary.get("pass_criterion"))
    for i, (k, value) in enumerate(summary["pass_at_k"].items()):
        row(
            f"pass@{k}",
            _fmt(value) + (f"  (a rollout passes when {crit.describe()})" if i == 0 else ""),
        )
    errors = summary["errors"]
    row("errors", ", ".join(f"{k}={v}" for k, v in sorted(errors.items())) if errors else "none")
    stops = summary.get("stop_reasons") or {}
    row("stop reasons", format_stop_reasons(stops))
    warning = length_warning(
        stops, summary["num_rollouts"], remedy="raise --max-tokens (max_tokens)"
    )
    if warning:
        row("warning", warning)
    row("tokens", _tokens_value(summary))
    row("cost", cost_line(summary))
    for note in ("concurrency", "stopped"):
        if summary.get(note):
            row(note, str(summary[note]))
    if summary.get("timing_ms"):
        row("time / rollout", format_timing(summary["timing_ms"]) + "  (mean)")
    rate = summary.get("rollouts_per_s")
    sessions = int(summary.get("sessions") or 1)
    row(
        "wall time",
        f"{summary['wall_time_s']:.1f} s"
        + (f" ({rate:.2f} rollouts/s)" if rate else "")
        + (f", resumed: {sessions} sessions summed" if sessions > 1 else ""),
    )
    for label, path in paths.items():
        if path:
            row(label, path)
    return "\n".join(lines)


def save_reward_histogram(rewards: list[float], path: str | Path, title: str = "") -> Path:
    """A histogram of rewards as a PNG (matplotlib, Agg backend: no display needed).

    Raises ImportError naming the extra when matplotlib is missing.
    """
    matplotlib = require("matplotlib", "the reward plot", "plot")
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    path = Path(path)
    lo = min([0.0, *rewards])
    hi = max([1.0, *rewards])
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    try:
        ax.hist(rewards, bins=20, range=(lo, hi), color="#4c72b0", edgecolor="white")
        if rewards:
            mean = sum(rewards) / len(rewards)
            ax.axvline(mean, color="#c44e52", linestyle="--", label=f"mean {mean:.3f}")
            ax.legend()
        ax.set_xlabel("reward")
        ax.set_ylabel("rollouts")
        ax.set_title(title or f"reward distribution ({len(rewards)} rollouts)", fontsize=10)
        fig.tight_layout()
        fig.savefig(path)
    finally:
        plt.close(fig)
    return path


def traceback_report(rows: Iterable[Row]) -> str | None:
    """Where the run's code failed: rollouts and distinct tracebacks per error category, then
    the first traceback in full; the same for the tool calls whose tool raised (they do not
    fail their rollouts); None when nothing kept a traceback."""
    first: tuple[str, str] | None = None
    rollouts: dict[str, int] = {}
    distinct: dict[str, set[str]] = {}
    tools = ToolTracebacks()
    for r in rows:
        tools.add_all((r,))
        error = r.get("error")
        text = error.get("traceback") if error else None
        if not error or not text:
            continue
        kind = error["category"]
        rollouts[kind] = rollouts.get(kind, 0) + 1
        distinct.setdefault(kind, set()).add(error.get("traceback_id") or text)
        if first is None:
            first = (kind, text)
    parts: list[str] = []
    if first is not None:
        counts = ", ".join(
            f"{kind} {n} rollout{'s' if n > 1 else ''} ({len(distinct[kind])} distinct)"
            for kind, n in sorted(rollouts.items())
        )
        parts.append(
            f"vf-lite: failures with a traceback: {counts}\n"
            f"the first ({first[0]}; VF_DEBUG=1 keeps the library's frames too):\n{first[1]}"
        )
    if tools.calls:
        text, _ = next(iter(tools.distinct.values()))
        parts.append(
            f"vf-lite: {tools.line()} (the model was told each error and went on)\n"
            f"the first tool traceback:\n{text}"
        )
    return "\n".join(parts) or None
