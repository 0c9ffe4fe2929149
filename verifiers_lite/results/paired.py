"""Paired comparison of two runs over the examples both scored: ``vf.compare_runs(a, b)``.

Examples are matched by ``example_id`` and must hold the same input in both runs (question
turns, answer, info, task; a system prompt may differ, so a prompt change can be compared).
Each example's mean reward is taken in each run; the per-example differences ``b − a`` go to
:func:`verifiers_lite.stats.error_bars.paired_test` (mean difference, standard error, 95% interval,
paired t-test, minimal detectable difference). Examples only one run has, or that one run
left unscored (every rollout errored), are counted and listed, never silently dropped.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.core.records import Row
from verifiers_lite.core.summary import RunSummary, cost_line, cost_per_reward
from verifiers_lite.results.compare import as_outputs, outputs_facts
from verifiers_lite.results.labels import run_labels, varying_keys
from verifiers_lite.results.metrics import scored_reward
from verifiers_lite.results.run_metadata import RunMetadata
from verifiers_lite.stats.error_bars import (
    ALPHA,
    POWER,
    Estimate,
    PairedTest,
    UndefinedStatistic,
    estimate_from_totals,
    examples_needed_for,
    format_estimate,
    paired_test,
)

if TYPE_CHECKING:
    import pandas as pd

    from verifiers_lite.results.outputs import GenerateOutputs

TIE = 1e-9  # per-example means closer than this are a tie


class ExamplesMismatchError(VerifiersError, ValueError):
    """The same example id holds different inputs in the two runs."""


@dataclass
class ExampleScore:
    """One example in one run: summed reward and count of its scored rollouts, its rollouts in
    all, and the identity of its input (None when the row does not carry it)."""

    reward_sum: float = 0.0
    scored: int = 0
    rollouts: int = 0
    key: str | None = None

    @property
    def mean(self) -> float:
        return self.reward_sum / self.scored if self.scored else math.nan


def example_key(row: Mapping[str, Any], few_shot: Any = None) -> str:
    """A hash of what makes an example that example: its prompt's turns but the system message
    and the run's ``few_shot`` turns, answer, info and task. A changed system prompt or few-shot
    keeps the key; another question or answer changes it."""
    prompt = row.get("prompt")
    turns = (
        [m for m in prompt if not (isinstance(m, dict) and m.get("role") == "system")]
        if isinstance(prompt, list)
        else prompt
    )
    if few_shot and isinstance(turns, list) and turns[: len(few_shot)] == list(few_shot):
        turns = turns[len(few_shot) :]
    payload = json.dumps(
        [turns, row.get("answer"), row.get("info"), row.get("task")],
        sort_keys=True,
        ensure_ascii=False,
        default=repr,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def run_few_shot(metadata: RunMetadata) -> list[Any] | None:
    """The few-shot turns a run recorded in its prompt template (None for none, or a group)."""
    template = metadata.get("prompt_template")
    return (template.get("few_shot") or None) if isinstance(template, Mapping) else None


def example_scores(rows: Iterable[Row], few_shot: Any = None) -> dict[Hashable, ExampleScore]:
    """Per example id (first-seen order): reward sum and counts, and its input key (the run's
    ``few_shot`` turns left out of it)."""
    out: dict[Hashable, ExampleScore] = {}
    for r in rows:
        score = out.get(r.get("example_id"))
        if score is None:
            score = out[r.get("example_id")] = ExampleScore(key=example_key(r, few_shot))
        score.rollouts += 1
        reward = scored_reward(r)
        if reward is not None:
            score.reward_sum += reward
            score.scored += 1
    return out


def run_estimate(scores: Mapping[Any, ExampleScore]) -> Estimate:
    """A run's mean reward with its clustered standard error and 95% interval."""
    kept = [s for s in scores.values() if s.scored]
    return estimate_from_totals([s.reward_sum for s in kept], [s.scored for s in kept])


@dataclass(frozen=True)
class ExampleRow:
    """One example of the comparison: mean reward and scored rollouts in each run, ``diff`` = b − a
    (NaN unless both scored it) and ``outcome``: ``b better``, ``tie``, ``b worse``,
    ``only in a``, ``only in b``, ``unscored in a``, ``unscored in b`` or ``unscored in both``."""

    example_id: Any
    reward_a: float
    reward_b: float
    scored_a: int
    scored_b: int
    diff: float
    outcome: str


@dataclass(frozen=True)
class RunComparison:
    """Run b against run a, paired over the examples both scored (see the module docstring).

    ``diff``, ``stderr``, ``ci``, ``p_value`` (paired t-test) and ``mde`` (the minimal
    difference detectable at 80% power, two-sided α = 0.05, with this many examples) come from
    :attr:`test`; ``wins``/``ties``/``losses`` count examples where b's mean reward is
    higher/equal/lower; ``only_a``, ``only_b`` and ``unscored`` list the examples left out of
    the pairing. :attr:`per_example` is the table, one row per example of either run."""

    labels: tuple[str, str]  #: each run's name in the report: given, or what differs between them
    #: the paired figures over the shared examples: mean difference b − a, its standard error,
    #: interval, p-value, minimal detectable difference, the differences' spread
    test: PairedTest
    #: each run's own mean reward over all the examples it scored, with its clustered interval
    estimates: tuple[Estimate, Estimate]
    mean_a: float  #: run a's mean reward over the shared examples only (NaN: none shared)
    mean_b: float  #: run b's mean reward over the shared examples only (NaN: none shared)
    wins: int  #: shared examples where b's mean reward is higher than a's
    ties: int  #: shared examples where both runs' mean rewards are equal
    losses: int  #: shared examples where b's mean reward is lower than a's
    only_a: tuple[Any, ...]  #: ids of the examples only run a has
    only_b: tuple[Any, ...]  #: ids of the examples only run b has
    #: ids of the examples a run has but left unscored (every rollout errored)
    unscored: tuple[Any, ...]
    #: one :class:`ExampleRow` per example of either run (:attr:`per_example` as a table)
    rows: tuple[ExampleRow, ...] = field(repr=False)
    #: each run's directory, when the run was given by its path (None: given as outputs)
    sources: tuple[str | None, str | None] = (None, None)
    #: each run's cost figures (``cost_usd_total``, ``cost_usd_mean``, ``cost_per_reward``:
    #: USD per unit of reward; None: unpriced; ``line``: them as the report prints them), when
    #: the comparison was made from whole runs
    costs: tuple[dict[str, Any] | None, dict[str, Any] | None] = (None, None)

    @property
    def diff(self) -> float:
        return self.test.diff

    @property
    def stderr(self) -> float:
        return self.test.stderr

    @property
    def ci(self) -> tuple[float, float]:
        return self.test.ci

    @property
    def p_value(self) -> float:
        return self.test.p_value

    @property
    def mde(self) -> float:
        return self.test.mde

    @property
    def shared(self) -> int:
        """Examples both runs scored: the pairs the figures are computed over."""
        return self.test.n

    @property
    def undefined(self) -> str | None:
        """Why the interval, p-value, detectable difference and examples needed are undefined
        (``no variance in either run``, ``one shared example``, ...), or None."""
        return self.test.undefined

    def examples_needed(self, delta: float, power: float = POWER, alpha: float = ALPHA) -> int:
        """Examples needed to detect a true difference ``delta`` (two-sided ``alpha``, ``power``)
        given the spread of this comparison's per-example differences. Raises
        :class:`~verifiers_lite.stats.error_bars.UndefinedStatistic` (a ValueError) naming the reason when
        that spread is undefined (no variance, one shared example)."""
        if self.test.undefined is not None and delta > 0:
            raise UndefinedStatistic(f"undefined: {self.test.undefined}")
        return examples_needed_for(self.test.sd, delta, alpha, power)

    @property
    def per_example(self) -> pd.DataFrame:
        """One row per example of either run: ``example_id``, ``reward_a``, ``reward_b`` (mean
        reward), ``scored_a``, ``scored_b``, ``diff`` (b − a) and ``outcome``."""
        import pandas as pd

        return pd.DataFrame(
            [r.__dict__ for r in self.rows],
            columns=[
                "example_id",
                "reward_a",
                "reward_b",
                "scored_a",
                "scored_b",
                "diff",
                "outcome",
            ],
        )

    def to_dict(self, per_example: bool = False) -> dict[str, Any]:
        """The figures as strict-JSON data (NaN as None): what ``vf-lite compare --json`` prints
        and the viewer's Compare page shows; ``per_example`` adds the per-example rows."""
        t = self.test
        out = {
            "labels": list(self.labels),
            "sources": list(self.sources),
            "runs": [
                {
                    "label": lab,
                    "reward_mean": e.mean,
                    "reward_stderr": e.stderr,
                    "reward_ci": list(e.ci),
                    "reward_ci_undefined": e.undefined,
                    "num_examples": e.clusters,
                    "num_scored": e.n,
                    **(cost or {}),
                }
                for lab, e, cost in zip(self.labels, self.estimates, self.costs, strict=True)
            ],
            "mean_a": self.mean_a,
            "mean_b": self.mean_b,
            "diff": t.diff,
            "stderr": t.stderr,
            "ci": list(t.ci),
            "p_value": t.p_value,
            "test": "paired t-test",
            "df": max(t.n - 1, 0),
            "mde": t.mde,
            "power": POWER,
            "alpha": ALPHA,
            "sd": t.sd,
            "undefined": t.undefined,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "shared": self.shared,
            "only_a": list(self.only_a),
            "only_b": list(self.only_b),
            "unscored": list(self.unscored),
        }
        if per_example:
            out["per_example"] = [dict(r.__dict__) for r in self.rows]
        return _strict_json(out)

    def describe(self, deltas: Iterable[float] = (0.05, 0.1)) -> str:
        """The report ``vf-lite compare`` prints."""
        return "\n".join(_report_lines(self, list(deltas)))

    def __str__(self) -> str:
        return self.describe()

    def __repr__(self) -> str:
        a, b = self.labels
        figures = (
            f"undefined: {self.undefined}"
            if self.undefined
            else f"95% CI [{_num(self.ci[0], signed=True)}, {_num(self.ci[1], signed=True)}], p={self.p_value:.3g}"
        )
        return (
            f"RunComparison({b!r} − {a!r}: {_num(self.diff, signed=True)} ± {_num(self.stderr)} "
            f"({figures}), b better/tie/worse {self.wins}/{self.ties}/{self.losses}, "
            f"{self.shared} shared examples, {len(self.only_a)} only in a, {len(self.only_b)} only in b, "
            f"{len(self.unscored)} unscored)"
        )

    def _repr_html_(self) -> str:
        lines = _report_lines(self, [0.05, 0.1])
        rows = "".join(
            f"<tr><th style='text-align:left;padding:2px 8px'>{html.escape(line[:22].strip())}</th>"
            f"<td style='padding:2px 8px;font-variant-numeric:tabular-nums'>{html.escape(line[22:])}</td></tr>"
            for line in lines[1:]
        )
        return (
            f"<div class='vf-compare-runs' style='font-family:sans-serif;font-size:13px'>"
            f"<b>{html.escape(lines[0])}</b><table style='border-collapse:collapse'>{rows}</table></div>"
        )


def _strict_json(value: Any) -> Any:
    """``value`` with NaN floats as None, tuples as lists (strict JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict_json(v) for v in value]
    return value


def _num(x: float, digits: int = 3, signed: bool = False) -> str:
    if x is None or math.isnan(x):
        return "n/a"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def _report_lines(c: RunComparison, deltas: list[float]) -> list[str]:
    a, b = c.labels
    t = c.test
    lines = [f"{b} − {a}: paired over {c.shared} shared examples (by example id)"]

    def row(label: str, value: str) -> None:
        lines.append(f"{label:<22}{value}")

    for tag, label, est, src in zip("ab", c.labels, c.estimates, c.sources, strict=True):
        row(f"run {tag}", label + (f"  {src}" if src else ""))
        row("  reward", f"{format_estimate(est.mean, est.stderr, est.ci)}, {est.clusters} examples")
    undefined = f"undefined: {t.undefined}" if t.undefined else None
    ci = undefined or f"95% CI [{_num(t.ci[0], signed=True)}, {_num(t.ci[1], signed=True)}]"
    spread = "" if t.undefined or math.isnan(t.stderr) else f" ± {_num(t.stderr)}"
    row(
        "difference b − a",
        f"{_num(t.diff, signed=True)}{spread}  {ci}  "
        f"(mean over shared examples: a {_num(c.mean_a)}, b {_num(c.mean_b)})",
    )
    row("p-value", undefined or f"{_num(t.p_value)}  (paired t-test, {max(t.n - 1, 0)} df)")
    row("per example", f"b better on {c.wins}, tied on {c.ties}, worse on {c.losses}")
    row(
        "examples",
        f"{c.shared} shared, {len(c.only_a)} only in a{_ids(c.only_a)}, "
        f"{len(c.only_b)} only in b{_ids(c.only_b)}, {len(c.unscored)} unscored in a run{_ids(c.unscored)}",
    )
    for tag, cost in zip("ab", c.costs, strict=True):
        if cost is not None:
            row(f"cost {tag}", cost["line"])
    row(
        "detectable",
        undefined
        or f"{_num(t.mde)} at {POWER:.0%} power (two-sided α = {ALPHA:g}, {t.n} examples)",
    )
    if undefined:
        row("examples needed", undefined)
        return lines
    needed = [f"{d:g}: {c.examples_needed(d):,}" for d in deltas]
    row(
        "examples needed",
        "to detect "
        + "; ".join(needed)
        + f"  (from the sd of per-example differences, {_num(t.sd)})",
    )
    return lines


def _ids(ids: tuple[Any, ...], show: int = 5) -> str:
    if not ids:
        return ""
    more = f", … {len(ids) - show} more" if len(ids) > show else ""
    return " (" + ", ".join(str(i) for i in ids[:show]) + more + ")"


def compare_scores(
    a: Mapping[Any, ExampleScore],
    b: Mapping[Any, ExampleScore],
    labels: tuple[str, str],
    check_inputs: bool = True,
    sources: tuple[str | None, str | None] = (None, None),
) -> RunComparison:
    """:class:`RunComparison` from each run's per-example scores (:func:`example_scores`).
    Raises :class:`ExamplesMismatchError` when a shared id holds another input in each run."""
    common = [e for e in a if e in b]
    if check_inputs:
        _check_same_inputs(a, b, common, labels)
    rows, diffs = [], []
    for e in [*a, *(e for e in b if e not in a)]:
        sa, sb = a.get(e), b.get(e)
        ma, mb = (s.mean if s else math.nan for s in (sa, sb))
        diff = mb - ma
        rows.append(
            ExampleRow(
                e,
                ma,
                mb,
                sa.scored if sa else 0,
                sb.scored if sb else 0,
                diff,
                _outcome(sa, sb, diff),
            )
        )
        if not math.isnan(diff):
            diffs.append(diff)
    paired = [r for r in rows if not math.isnan(r.diff)]
    outcomes = [r.outcome for r in rows]
    return RunComparison(
        labels=labels,
        test=paired_test(diffs, no_variance=_no_variance(paired)),
        estimates=(run_estimate(a), run_estimate(b)),
        mean_a=_mean([r.reward_a for r in paired]),
        mean_b=_mean([r.reward_b for r in paired]),
        wins=outcomes.count("b better"),
        ties=outcomes.count("tie"),
        losses=outcomes.count("b worse"),
        only_a=tuple(r.example_id for r in rows if r.outcome == "only in a"),
        only_b=tuple(r.example_id for r in rows if r.outcome == "only in b"),
        unscored=tuple(r.example_id for r in rows if r.outcome.startswith("unscored")),
        rows=tuple(rows),
        sources=sources,
    )


def _no_variance(paired: list[ExampleRow]) -> str | None:
    """ "no variance in either run" when each run gives every shared example the same mean (two
    all-zero runs): the differences then have no spread for a reason worth naming."""
    if len(paired) < 2 or any(
        len({round(getattr(r, side), 12) for r in paired}) > 1 for side in ("reward_a", "reward_b")
    ):
        return None
    return (
        f"no variance in either run (every shared example's mean is {paired[0].reward_a:.3f} in a "
        f"and {paired[0].reward_b:.3f} in b)"
    )


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _outcome(sa: ExampleScore | None, sb: ExampleScore | None, diff: float) -> str:
    if sa is None or sb is None:
        return "only in b" if sa is None else "only in a"
    if not (sa.scored and sb.scored):
        return (
            "unscored in both"
            if not (sa.scored or sb.scored)
            else f"unscored in {'b' if sa.scored else 'a'}"
        )
    return "tie" if abs(diff) <= TIE else ("b better" if diff > 0 else "b worse")


def _check_same_inputs(
    a: Mapping[Any, ExampleScore],
    b: Mapping[Any, ExampleScore],
    common: list[Hashable],
    labels: tuple[str, str],
) -> None:
    differ = [e for e in common if a[e].key and b[e].key and a[e].key != b[e].key]
    if differ:
        shown = ", ".join(str(e) for e in differ[:8]) + (", …" if len(differ) > 8 else "")
        raise ExamplesMismatchError(
            f"runs {labels[0]!r} and {labels[1]!r} hold different inputs under the same example ids "
            f"({len(differ)} of {len(common)} shared ids differ: {shown}): they are not the same "
            "examples (another dataset, seed, number of examples drawn, or prompt template), so a "
            "paired comparison would be meaningless. Compare runs of the same examples, or pass "
            "check_inputs=False (vf-lite compare --no-check-inputs) if the inputs changed on purpose."
        )


def compare_runs(
    a: GenerateOutputs | str | Any,
    b: GenerateOutputs | str | Any,
    *,
    labels: tuple[str, str] | None = None,
    check_inputs: bool = True,
) -> RunComparison:
    """Compare run ``b`` against run ``a`` (``GenerateOutputs`` or run directories), paired over
    the examples both scored: mean difference b − a with its standard error, 95% interval and
    paired t-test p-value, per-example wins/ties/losses, examples only one run has, and the
    minimal detectable difference. Runs are labelled by what differs between them (the model, a
    sampling or environment argument, the system prompt, the few-shot turns, the rubric,
    ``rescored`` vs ``original``), unless ``labels=("name a", "name b")`` are given. Raises
    ExamplesMismatchError (a ValueError) when an example id holds
    another input in each run, unless ``check_inputs=False``."""
    outs = (as_outputs(a, "compare_runs()"), as_outputs(b, "compare_runs()"))
    facts = [outputs_facts(o) for o in outs]
    if labels is None and not varying_keys(facts):
        labels = ("a", "b")  # nothing differs: the run directories, printed beside, tell them apart
    auto = run_labels(facts, list(labels) if labels is not None else None)
    lab = (auto[0], auto[1])
    sources = tuple(
        str(x) if isinstance(x, (str, bytes)) or hasattr(x, "__fspath__") else None for x in (a, b)
    )
    scores = [example_scores(o.rows, run_few_shot(o.metadata)) for o in outs]
    c = compare_scores(scores[0], scores[1], lab, check_inputs, (sources[0], sources[1]))
    return replace(c, costs=(_run_cost(outs[0]), _run_cost(outs[1])))


def _run_cost(outputs: GenerateOutputs) -> dict[str, Any]:
    """A run's cost figures for the comparison (over all its rows)."""
    s = RunSummary().add_all(outputs.rows).summary()
    return {
        "cost_usd_total": s["cost_usd_total"],
        "cost_usd_mean": s["cost_usd_mean"],
        "cost_per_reward": cost_per_reward(s),
        "line": cost_line(s, per_reward=True),
    }


def examples_needed(
    run: RunComparison | GenerateOutputs | str | Any,
    delta: float,
    power: float = POWER,
    alpha: float = ALPHA,
) -> int:
    """How many examples a paired comparison needs to detect a true difference ``delta`` in
    mean reward (two-sided ``alpha``, ``power``). From a :class:`RunComparison`, the observed
    spread of its per-example differences; from one run, twice the variance of its per-example
    mean rewards, i.e. as if the other run were as variable and uncorrelated with it (pairing
    on shared examples usually does better, so this errs on the safe side)."""
    if isinstance(run, RunComparison):
        return run.examples_needed(delta, power, alpha)
    scores = example_scores(as_outputs(run, "examples_needed()").rows)
    means = [s.mean for s in scores.values() if s.scored]
    if len(means) < 2:
        raise UndefinedStatistic(
            f"undefined: {'one example' if means else 'no scored example'} "
            f"(examples_needed() needs a run with at least two scored examples)"
        )
    mu = sum(means) / len(means)
    sd = math.sqrt(2 * sum((m - mu) ** 2 for m in means) / (len(means) - 1))
    if sd == 0 and delta > 0:
        raise UndefinedStatistic(
            f"undefined: no variance in the run, every example's mean is {mu:.3f}"
        )
    return examples_needed_for(sd, delta, alpha, power)
