"""``vf-lite compare RUN_A RUN_B``: run b against run a, paired over their shared examples."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from verifiers_lite.results.store import RESULTS_FILE

DEFAULT_DELTAS = (0.05, 0.1)
DEFAULT_TOP = 10


def add_compare_parser(sub: Any) -> None:
    """The ``compare`` subcommand and its options."""
    cp = sub.add_parser(
        "compare",
        help="compare two runs, paired over their shared examples",
        description="Run b against run a over the examples both scored (matched by example id, "
        "inputs checked): mean difference b − a ± stderr with its 95% interval, paired "
        "t-test p-value, examples where b is better / tied / worse, examples only one run "
        "has, the minimal detectable difference at 80% power and the examples needed to "
        "detect a given difference. Exit status 2 when the runs share no scored example.",
    )
    cp.add_argument(
        "run_a",
        metavar="RUN_A",
        help="run directory (what vf-lite eval or results_path wrote) or an inspect_ai .eval log",
    )
    cp.add_argument(
        "run_b", metavar="RUN_B", help="run directory or .eval log compared against RUN_A"
    )
    cp.add_argument(
        "--delta",
        type=float,
        action="append",
        default=None,
        metavar="D",
        help="a difference to plan for: print the examples needed to detect it "
        f"(repeatable; default: {', '.join(map(str, DEFAULT_DELTAS))})",
    )
    cp.add_argument(
        "--top",
        type=int,
        default=DEFAULT_TOP,
        metavar="N",
        help=f"per-example rows shown, largest difference first (default: {DEFAULT_TOP}; 0: none)",
    )
    cp.add_argument("--json", action="store_true", help="print the figures as JSON")
    cp.add_argument(
        "--no-check-inputs",
        action="store_true",
        help="pair examples by id even when their inputs differ between the runs",
    )


def check_run_path(path: str) -> Path:
    """``path`` as a run: a run directory, or a log file another tool wrote that
    :func:`~verifiers_lite.results.outputs.load_results` reads (an inspect ``.eval``);
    ValueError naming what is wrong otherwise."""
    from verifiers_lite.results.outputs import run_reader

    p = Path(path)
    if not p.exists():
        raise ValueError(f"{path}: no such run directory")
    if p.is_file() and run_reader(p) is not None:
        return p
    if not p.is_dir():
        raise ValueError(
            f"{path}: not a directory (give a run directory written by vf-lite eval or results_path)"
        )
    if not (p / RESULTS_FILE).is_file():
        raise ValueError(
            f"{path}: no {RESULTS_FILE} in it (give a run directory written by vf-lite eval or results_path)"
        )
    return p


def run_compare(args: argparse.Namespace) -> int:
    """Print the comparison; 0 when it was made, 2 (message on stderr) for a bad path, runs with
    different inputs under the same ids, or runs without a shared scored example."""
    from verifiers_lite.results.paired import ExamplesMismatchError, compare_runs

    deltas = args.delta or list(DEFAULT_DELTAS)
    bad = [d for d in deltas if not (math.isfinite(d) and d > 0)]
    if bad:
        raise ValueError(f"--delta must be a positive difference, got {bad[0]}")
    if args.top < 0:
        raise ValueError(f"--top must be >= 0, got {args.top}")
    a, b = check_run_path(args.run_a), check_run_path(args.run_b)
    try:
        c = compare_runs(a, b, check_inputs=not args.no_check_inputs)
    except ExamplesMismatchError as exc:
        raise ValueError(str(exc)) from exc
    if args.json:
        print(
            json.dumps(
                {**c.to_dict(per_example=True), "examples_needed": _needed(c, deltas)},
                default=str,
                allow_nan=False,
            )
        )
    else:
        print(c.describe(deltas))
        if args.top and c.shared:
            print("\n" + _top_examples(c, args.top))
    if c.shared == 0:
        print(
            f"vf-lite: error: the runs share no scored example ({len(c.only_a)} only in {args.run_a}, "
            f"{len(c.only_b)} only in {args.run_b}, {len(c.unscored)} unscored in one of them): "
            "nothing to pair",
            file=sys.stderr,
        )
        return 2
    return 0


def _needed(c: Any, deltas: list[float]) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for d in deltas:
        try:
            out[f"{d:g}"] = c.examples_needed(d)
        except ValueError:
            out[f"{d:g}"] = None
    return out


def _top_examples(c: Any, top: int) -> str:
    """The examples with the largest differences, as a small table."""
    df = c.per_example
    paired = df[df["diff"].notna()]
    shown = paired.reindex(
        paired["diff"].abs().sort_values(ascending=False, kind="stable").index
    ).head(top)
    a, b = c.labels
    lines = [
        f"largest per-example differences ({len(shown)} of {len(paired)}; mean reward, scored rollouts):",
        f"  {'example':<10}{'a':>8}{'b':>8}{'b − a':>9}  outcome",
    ]
    for r in shown.itertuples():
        lines.append(
            f"  {str(r.example_id):<10}{r.reward_a:>8.3f}{r.reward_b:>8.3f}{r.diff:>+9.3f}  {r.outcome}"
        )
    lines.append(f"  (a = {a}, b = {b}; every example: vf.compare_runs(a, b).per_example)")
    return "\n".join(lines)
