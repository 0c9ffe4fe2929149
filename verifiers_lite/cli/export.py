"""``vf-lite export RUN --format inspect``: a saved run as another tool's log."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

FORMATS = ("inspect",)


def add_export_parser(sub: Any) -> None:
    """The ``export`` subcommand and its options."""
    ex = sub.add_parser(
        "export",
        help="write a saved run as another tool's log (inspect_ai)",
        description="Write RUN (a run directory) as an inspect_ai log that `inspect view` "
        "opens: one sample per rollout, its messages, usage and scores, the run's model, "
        "sampling arguments and manifest. Needs the 'inspect' extra.",
    )
    ex.add_argument(
        "run", metavar="RUN", help="run directory (what vf-lite eval or results_path wrote)"
    )
    ex.add_argument("--format", choices=FORMATS, required=True, help="the log format to write")
    ex.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="PATH",
        help="a .eval file, or a log directory to write one into (default: RUN/inspect)",
    )


def run_export(args: argparse.Namespace) -> int:
    """Write the log and print where; a bad run directory is a ValueError before anything is written."""
    from verifiers_lite.cli.compare import check_run_path
    from verifiers_lite.interop.inspect_export import export_inspect

    run = check_run_path(args.run)
    written = export_inspect(run, Path(args.output) if args.output else run / "inspect")
    print(f"wrote {written} (inspect view --log-dir {written.parent})")
    return 0
