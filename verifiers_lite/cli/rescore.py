"""``vf-lite rescore RUN_DIR``: score a saved run again with its environment's current rubric."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from verifiers_lite.results.run_metadata import RunMetadata


def add_rescore_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """The ``rescore`` subcommand."""
    rs = sub.add_parser(
        "rescore",
        help="score a saved run again with the environment's current rubric (no model request)",
        description="Load the environment RUN_DIR was made with (its env id and args, from metadata.json), "
        "score the saved rollouts with that environment's current rubric (group rewards and "
        "advantages recomputed, errored rollouts left unscored) and write a new run directory.",
    )
    rs.add_argument(
        "run_dir",
        metavar="RUN_DIR",
        help="a run directory (results_path, or one vf-lite eval wrote)",
    )
    rs.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="DIR",
        help="where the re-scored run goes (default: RUN_DIR-rescored)",
    )
    rs.add_argument(
        "--overwrite", action="store_true", help="replace a run already at the output directory"
    )
    rs.add_argument(
        "-a",
        "--env-args",
        default=None,
        metavar="JSON",
        help="environment arguments as a JSON object (default: the saved run's)",
    )
    rs.add_argument("--no-table", action="store_true", help="print only the output directory")


def run_rescore(
    args: argparse.Namespace,
    load_env: Callable[[str, dict[str, Any]], Any],
    load_group: Callable[[list[str], dict[str, Any]], Any],
    parse_env_args: Callable[[str | None], dict[str, Any]],
) -> int:
    """Re-score, print the new summary beside the old reward, return 0. User mistakes raise
    ValueError / FileNotFoundError / FileExistsError (the caller prints them, exit 2)."""
    import verifiers_lite as vf
    from verifiers_lite.cli.report import format_table, run_summary
    from verifiers_lite.results.run_metadata import read_run_metadata

    run_dir = Path(args.run_dir)
    meta_file = run_dir / "metadata.json"
    if not meta_file.exists():
        raise FileNotFoundError(f"{run_dir} holds no run (no metadata.json)")
    saved = read_run_metadata(run_dir)
    env_id = saved.get("env_id")
    if not isinstance(env_id, str) or not env_id:
        raise ValueError(
            f"{meta_file} names no env_id: re-score it from Python with vf.rescore(path, rubric)"
        )
    env_args = (
        parse_env_args(args.env_args)
        if args.env_args is not None
        else dict(saved.get("env_args") or {})
    )
    ids = env_id.split("+")
    _check_loadable(ids, saved, run_dir)
    env = load_group(ids, env_args) if len(ids) > 1 else load_env(env_id, env_args)
    t0 = time.perf_counter()
    out = vf.rescore(run_dir, env, results_path=args.output, overwrite=args.overwrite)
    target = out.metadata.get("results_path")
    if args.no_table:
        print(target)
        return 0
    summary = run_summary(
        list(out.rows),
        int(saved.get("rollouts_per_example") or 1),
        time.perf_counter() - t0,
        out.pass_criterion,
    )
    # The rows' timings are the original run's rollouts: beside this command's own wall time
    # they would read as its own.
    summary.pop("timing_ms", None)
    before = saved.get("reward_mean")
    print(
        format_table(
            summary,
            f"vf-lite rescore {env_id} · model {saved.get('model')}",
            {"results": target, "from": str(run_dir)},
        )
    )
    if isinstance(before, (int, float)):
        print(
            f"reward before {before:.3f}, after {summary['reward_mean']:.3f} (same rollouts, no model request)"
        )
    sys.stdout.flush()
    return 0


def _check_loadable(env_ids: list[str], saved: RunMetadata, run_dir: Path) -> None:
    """Refuse a run whose environment cannot be loaded by id (defined in a notebook or a script),
    with the way out that works where it is defined."""
    from verifiers_lite.core.registry import is_registered
    from verifiers_lite.ledger.manifest import session_manifests

    missing = [i for i in env_ids if not is_registered(i)]
    if not missing:
        return
    manifests = session_manifests(saved)
    source = manifests[0].get("environment") if manifests else None
    where = ""
    if isinstance(source, dict) and source.get("class"):
        module = source.get("module")
        where = (
            f" (its environment, class {source['class']}, was defined in __main__: a notebook or a script)"
            if module == "__main__"
            else f" (its environment: class {source['class']} of {module})"
        )
    raise ValueError(
        f"{run_dir} was made with {', '.join(map(repr, missing))}, which is not an environment id vf-lite can "
        f"load{where}. Re-score it from Python, where the environment is defined: "
        f"vf.rescore({str(run_dir)!r}, env) (env: that environment, or its rubric)"
    )
