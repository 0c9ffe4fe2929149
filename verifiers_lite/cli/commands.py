"""``vf-lite``: evaluate a bundled or installed environment from the shell (``vf-lite eval``),
compare two runs (``vf-lite compare``), list environments (``vf-lite list``), scaffold an
environment package (``vf-lite init``), serve rollouts (``vf-lite serve``) and re-score a saved
run (``vf-lite rescore``)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verifiers_lite.cli.cache import run_cache
from verifiers_lite.cli.errors import CLIError
from verifiers_lite.cli.eval import accepts, load_env, parse_env_args, run_eval
from verifiers_lite.cli.parser import DEFAULT_SAVE_DIR, build_parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``vf-lite`` script; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:
        return _serve(argv[1:])  # the server parses its own options
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if args.command == "view":
            return _view(args)
        if args.command == "cache":
            return run_cache(args)
        if args.command == "compare":
            return _compare(args)
        if args.command == "list":
            return _list()
        if args.command == "init":
            return _init(args.name, args.path)
        if args.command == "rescore":
            return _rescore(args)
        if args.command == "export":
            return _export(args)
        return run_eval(args)
    except CLIError as exc:
        print(f"vf-lite: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nvf-lite: interrupted", file=sys.stderr)
        return 130


def _list() -> int:
    from verifiers_lite.core.registry import environment_catalog

    catalog = environment_catalog()
    width = max((len(info.env_id) for info in catalog), default=0)
    for info in catalog:
        origin = "" if info.source == "bundled" else f"  [{info.source}]"
        print(f"{info.env_id:<{width}}  {info.description}{origin}".rstrip())
    return 0


def _init(name: str, path: str | None) -> int:
    from verifiers_lite.cli.scaffold import scaffold_environment

    try:
        created = scaffold_environment(name, Path(path) if path else None)
    except (ValueError, FileExistsError) as exc:
        raise CLIError(str(exc)) from exc
    print(f"created {created}: pip install -e {created} && vf-lite eval {name}")
    return 0


def _view(args: argparse.Namespace) -> int:
    """``vf-lite view``: serve the results viewer until interrupted."""
    default = Path(DEFAULT_SAVE_DIR)
    paths = [Path(p) for p in args.paths] or [default if default.is_dir() else Path(".")]
    with tempfile.TemporaryDirectory(prefix="vf-lite-view-") as scratch:
        return _serve_viewer(args, _as_run_dirs(paths, Path(scratch)))


def _as_run_dirs(paths: list[Path], scratch: Path) -> list[Path]:
    """``paths`` with each log file another tool wrote (an inspect ``.eval``) read and saved as
    a run directory under ``scratch``, which the viewer indexes like any run."""
    from verifiers_lite.results.outputs import load_results, run_reader

    out = []
    for i, p in enumerate(paths):
        if p.is_file() and run_reader(p) is not None:
            try:
                out.append(load_results(p).save(scratch / f"{i}-{p.stem}"))
            except (ImportError, ValueError) as exc:
                raise CLIError(f"{p}: {exc}") from exc
        else:
            out.append(p)
    return out


def _serve_viewer(args: argparse.Namespace, paths: list[Path]) -> int:
    missing = [str(p) for p in paths if not p.is_dir()]
    if missing:
        raise CLIError(
            f"not a directory: {', '.join(missing)} (give run directories, folders of runs or "
            ".eval logs)"
        )
    if not 0 <= args.port <= 65535:
        raise CLIError(f"--port must be between 0 and 65535, got {args.port}")
    try:
        from verifiers_lite.ui.viewer.serve import run_viewer

        return run_viewer(
            paths,
            host=args.host,
            port=args.port,
            token="" if args.token else None,
            open_browser=not args.no_browser,
        )
    except (ImportError, ValueError) as exc:
        raise CLIError(str(exc)) from exc
    except OSError as exc:
        raise CLIError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from exc


def _compare(args: argparse.Namespace) -> int:
    """``vf-lite compare``: a bad path or option is a CLIError (exit 2) before anything is read."""
    from verifiers_lite.cli.compare import run_compare

    try:
        return run_compare(args)
    except (ValueError, FileNotFoundError) as exc:
        raise CLIError(str(exc)) from exc


def _export(args: argparse.Namespace) -> int:
    """``vf-lite export``: a bad run directory or a missing extra is a CLIError (exit 2)."""
    from verifiers_lite.cli.export import run_export

    try:
        return run_export(args)
    except (ValueError, FileNotFoundError, ImportError) as exc:
        raise CLIError(str(exc)) from exc


def _rescore(args: argparse.Namespace) -> int:
    from verifiers_lite.cli.group import load_group
    from verifiers_lite.cli.rescore import run_rescore

    def group(ids: list[str], env_args: dict[str, Any]) -> Any:
        return load_group(ids, env_args, None, load_env, accepts)

    try:
        return run_rescore(args, load_env, group, parse_env_args)
    except (ValueError, FileNotFoundError, FileExistsError) as exc:
        raise CLIError(str(exc)) from exc


def _serve(argv: list[str]) -> int:
    try:
        from verifiers_lite.cli.serve import serve_main
    except ImportError as exc:
        from verifiers_lite._util.extras import install_hint

        print(
            f"vf-lite: error: the rollout server is not available ({exc}); "
            f"install it with: {install_hint('server')}",
            file=sys.stderr,
        )
        return 2
    return int(serve_main(argv) or 0)
