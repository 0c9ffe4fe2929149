"""``vf-lite``: evaluate a bundled or installed environment from the shell (``vf-lite eval``),
compare two runs (``vf-lite compare``), list environments (``vf-lite list``), scaffold an
environment package (``vf-lite init``), serve rollouts (``vf-lite serve``) and re-score a saved
run (``vf-lite rescore``)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from verifiers_lite.cli.cache import run_cache
from verifiers_lite.cli.parser import (
    DEFAULT_NUM_EXAMPLES,
    DEFAULT_ROLLOUTS,
    DEFAULT_SAVE_DIR,
    OPENAI_BASE_URL,
    build_parser,
)


class CLIError(Exception):
    """A user mistake: printed as ``error: ...`` and exit code 2 (no traceback)."""


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
        return run_eval(args)
    except CLIError as exc:
        print(f"vf-lite: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nvf-lite: interrupted", file=sys.stderr)
        return 130


def _list() -> int:
    from verifiers_lite.registry import environment_catalog

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
    missing = [str(p) for p in paths if not p.is_dir()]
    if missing:
        raise CLIError(f"not a directory: {', '.join(missing)} (give run directories or folders of runs)")
    if not 0 <= args.port <= 65535:
        raise CLIError(f"--port must be between 0 and 65535, got {args.port}")
    try:
        from verifiers_lite.viewer.serve import run_viewer

        return run_viewer(paths, host=args.host, port=args.port, token="" if args.token else None,
                          open_browser=not args.no_browser)
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


def _rescore(args: argparse.Namespace) -> int:
    from verifiers_lite.cli.group import load_group
    from verifiers_lite.cli.rescore import run_rescore

    def group(ids: list[str], env_args: dict[str, Any]) -> Any:
        return load_group(ids, env_args, None, _load_env, _accepts)

    try:
        return run_rescore(args, _load_env, group, parse_env_args)
    except (ValueError, FileNotFoundError, FileExistsError) as exc:
        raise CLIError(str(exc)) from exc


def _serve(argv: list[str]) -> int:
    try:
        from verifiers_lite.server.cli import serve_main
    except ImportError as exc:
        from verifiers_lite.extras import install_hint

        print(f"vf-lite: error: the rollout server is not available ({exc}); "
              f"install it with: {install_hint('server')}", file=sys.stderr)
        return 2
    return int(serve_main(argv) or 0)


# -- eval ---------------------------------------------------------------------------------------


def parse_env_args(text: str | None) -> dict[str, Any]:
    """``-a`` JSON -> dict, with a clear error for anything else."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CLIError(f"--env-args is not valid JSON ({exc.msg} at char {exc.pos}): {text!r}") from exc
    if not isinstance(value, dict):
        raise CLIError(f"--env-args must be a JSON object like '{{\"seed\": 1}}', got {type(value).__name__}")
    return value


def _check_numbers(args: argparse.Namespace) -> None:
    if args.num_examples is not None and (args.num_examples == 0 or args.num_examples < -1):
        raise CLIError(f"--num-examples must be >= 1 (or -1 for all), got {args.num_examples}")
    if args.rollouts_per_example is not None and args.rollouts_per_example < 1:
        raise CLIError(f"--rollouts-per-example must be >= 1, got {args.rollouts_per_example}")
    if args.model is not None and not args.model.strip():
        raise CLIError("--model must not be empty (omit -m to use the server's first model)")
    if not 0 <= args.max_error_rate <= 1:
        raise CLIError(f"--max-error-rate must be between 0 and 1, got {args.max_error_rate}")
    if args.keep_errors and args.resume is None:
        raise CLIError("--keep-errors only applies with --resume")
    if args.max_concurrent < 1:
        raise CLIError(f"--max-concurrent must be >= 1, got {args.max_concurrent}")
    if args.max_tokens is not None and args.max_tokens < 1:
        raise CLIError(f"--max-tokens must be >= 1, got {args.max_tokens}")
    if args.temperature is not None and args.temperature < 0:
        raise CLIError(f"--temperature must be >= 0, got {args.temperature}")
    if args.parallel is not None and args.parallel < 1:
        raise CLIError(f"--parallel must be >= 1, got {args.parallel}")
    if args.timeout <= 0:
        raise CLIError(f"--timeout must be positive, got {args.timeout}")
    for url in args.base_url or []:
        if not url.startswith(("http://", "https://")):
            raise CLIError(f"--base-url must be an http(s) URL, got {url!r}")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "model"


def _find_latest_run(root: Path, env_id: str, model: str | None) -> Path:
    pattern = f"{_slug(env_id)}--{_slug(model)}" if model else f"{_slug(env_id)}--*"
    runs = sorted(p for d in root.glob(pattern) for p in d.iterdir() if (p / "metadata.json").exists())
    if not runs:
        raise CLIError(f"--resume: no earlier run of {env_id!r} under {root}/ to resume")
    return max(runs, key=lambda p: p.name)


def _load_env(env_id: str, env_args: dict[str, Any]) -> Any:
    import verifiers_lite as vf

    try:
        return vf.load_environment(env_id, **env_args)
    except ValueError as exc:
        raise CLIError(str(exc)) from exc
    except TypeError as exc:
        raise CLIError(f"bad --env-args for {env_id!r}: {exc}") from exc


def _accepts(env_id: str, name: str) -> bool:
    import inspect

    from verifiers_lite.registry import environment_loader

    try:
        loader = environment_loader(env_id)
    except ImportError:
        return False
    if loader is None:
        return False
    params = inspect.signature(loader).parameters
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _discover_model(base_url: str, api_key: str | None) -> str:
    """The one model a server lists at ``GET /models`` (vLLM and llama.cpp serve one); several
    are a usage error naming them (the first is not a guess worth making)."""
    from verifiers_lite.clients.models import list_models, only_model
    from verifiers_lite.sync import run_sync

    url = base_url.rstrip("/")
    try:
        models = run_sync(list_models(url, api_key))
    except Exception as exc:
        raise CLIError(f"no --model given and {url}/models did not name one ({exc}); pass -m MODEL") from exc
    try:
        model = only_model(models, url, "pass -m MODEL")
    except ValueError as exc:
        raise CLIError(f"no --model given: {exc}") from exc
    print(f"vf-lite: no -m given; using {model!r}, the one model {url}/models lists", file=sys.stderr)
    return model


@contextlib.contextmanager
def _endpoints(args: argparse.Namespace, saved_model: str | None) -> Iterator[tuple[Any, str, str]]:
    """Yield (client or clients, model name, description of where the model runs)."""
    from verifiers_lite.clients.http import ChatClient

    api_key = os.environ.get(args.api_key_var) or None
    urls = list(args.base_url or [])
    if args.model is None and saved_model is not None and args.gguf is None:
        # a resume goes on with the run's model (on the embedded one unless -b says otherwise)
        args.model = None if saved_model == _embedded_name() and not urls else saved_model
    if not urls and args.model not in (None, _embedded_name()) and args.gguf is None:
        urls = [OPENAI_BASE_URL]  # a model name alone means a hosted API, as in vf-eval
    if urls == [OPENAI_BASE_URL] and not api_key:
        raise CLIError(f"--model {args.model!r} without --base-url means {OPENAI_BASE_URL}, which needs an API "
                       f"key: set ${args.api_key_var} (or name another variable with -k), or give -b URL")
    if urls:
        model = args.model or _discover_model(urls[0], api_key)
        clients = [ChatClient(u, api_key, timeout=args.timeout) for u in urls]
        where = ", ".join(urls)
        yield (clients if len(clients) > 1 else clients[0]), model, where
        return
    from verifiers_lite.local.supervisor import (
        LocalModel,
        LocalModelError,
        default_model_path,
        default_parallel,
        start_servers,
    )

    parallel = args.parallel or default_parallel()
    try:
        path = Path(args.gguf) if args.gguf else default_model_path()
        if not path.is_file():
            raise FileNotFoundError(f"GGUF model not found: {path}")
        LocalModel.check_available()
    except (ImportError, FileNotFoundError) as exc:
        raise CLIError(f"cannot start the embedded model: {exc}") from exc
    print(f"vf-lite: starting {parallel} llama.cpp server process(es) for {path.name} on 127.0.0.1 ...",
          file=sys.stderr)
    try:
        servers = start_servers(parallel, args.gguf, n_threads=args.threads, n_ctx=args.n_ctx,
                                request_timeout=args.timeout)
    except (LocalModelError, ValueError) as exc:
        raise CLIError(str(exc)) from exc
    try:
        clients = [s.client() for s in servers]
        where = f"embedded llama.cpp, {parallel} process(es) x {servers[0].n_threads} thread(s): " + ", ".join(
            s.base_url for s in servers)
        yield (clients[0] if len(clients) == 1 else clients), servers[0].model_name, where
    finally:
        for s in servers:
            s.stop()


def _embedded_name() -> str:
    from verifiers_lite.local.supervisor import DEFAULT_MODEL_NAME

    return DEFAULT_MODEL_NAME


def _executor(args: argparse.Namespace) -> Any:
    """A RayExecutor when --ray-workers is given, else None (in-process)."""
    if args.ray_workers is None:
        if args.ray_address is not None:
            raise CLIError("--ray-address needs --ray-workers N")
        return None
    if args.ray_workers < 1:
        raise CLIError(f"--ray-workers must be >= 1, got {args.ray_workers}")
    from verifiers_lite.executors.ray import RayExecutor

    return RayExecutor(num_workers=args.ray_workers, address=args.ray_address,
                       init_kwargs=None if args.ray_address else {"num_cpus": os.cpu_count() or 2})


def run_eval(args: argparse.Namespace) -> int:
    """``vf-lite eval``: run, print the summary table, write results and the reward plot."""
    from verifiers_lite.cli.report import format_table, run_summary, save_reward_histogram
    from verifiers_lite.executors.ray import WorkerStartError
    from verifiers_lite.progress import TqdmProgress
    from verifiers_lite.stats import format_estimate

    _check_numbers(args)
    env_ids = list(args.env_id) if isinstance(args.env_id, list) else [args.env_id]
    args.env_id = "+".join(env_ids)  # a group's name: in run directories, messages, --resume
    env_args = parse_env_args(args.env_args)
    root = Path(args.save_dir)
    saved: dict[str, Any] = {}
    run_dir: Path | None = None
    if args.resume is not None:
        run_dir = _find_latest_run(root, args.env_id, args.model) if args.resume == "latest" else Path(args.resume)
        meta_file = run_dir / "metadata.json"
        if not meta_file.exists():
            raise CLIError(f"--resume: {run_dir} holds no run (no metadata.json)")
        saved = json.loads(meta_file.read_text())
        if args.env_args is None:
            env_args = dict(saved.get("env_args") or {})
    if len(env_ids) > 1:
        from verifiers_lite.cli.group import load_group

        try:
            env = load_group(env_ids, env_args, args.seed, _load_env, _accepts)
        except ValueError as exc:
            raise CLIError(str(exc)) from exc
    else:
        if args.seed is not None and "seed" not in env_args:
            if not _accepts(args.env_id, "seed"):
                raise CLIError(f"--seed: environment {args.env_id!r} takes no seed argument")
            env_args["seed"] = args.seed
        env = _load_env(args.env_id, env_args)
    executor = _executor(args)
    num_examples = args.num_examples or saved.get("num_examples") or DEFAULT_NUM_EXAMPLES
    if len(env_ids) > 1 and args.num_examples is None and saved.get("tasks"):
        # a group's saved count is over all tasks; resume with each task's own
        num_examples = {t: int(v.get("num_examples", 0)) for t, v in saved["tasks"].items()}
    rollouts = args.rollouts_per_example or saved.get("rollouts_per_example") or DEFAULT_ROLLOUTS
    sampling_args: dict[str, Any] = dict(saved.get("sampling_args") or {}) if saved else {}
    if args.max_tokens is not None:
        sampling_args["max_tokens"] = args.max_tokens
    if args.temperature is not None:
        sampling_args["temperature"] = args.temperature

    with _endpoints(args, saved.get("model")) as (client, model, where):
        if run_dir is None:
            run_dir = root / f"{_slug(args.env_id)}--{_slug(model)}" / time.strftime("%Y%m%d-%H%M%S")
            while run_dir.exists():  # two runs in one second
                run_dir = run_dir.with_name(run_dir.name + "-1")
        run_dir.mkdir(parents=True, exist_ok=True)
        print(f"vf-lite: {args.env_id} x {model} ({where}): {num_examples} examples x {rollouts} rollouts "
              f"-> {run_dir}", file=sys.stderr)
        t0 = time.perf_counter()
        try:
            out = env.evaluate_sync(
                client, model, num_examples=num_examples, rollouts_per_example=rollouts,
                max_concurrent=args.max_concurrent, sampling_args=sampling_args or None,
                results_path=str(run_dir), progress=False if args.quiet else TqdmProgress(args.env_id, warn=False),
                executor=executor, rerun_errors=not args.keep_errors, cache=args.cache,
            )
        except KeyboardInterrupt:
            print(f"\nvf-lite: interrupted; finished groups are saved. Resume with:\n"
                  f"  vf-lite eval {args.env_id} --resume {run_dir}", file=sys.stderr)
            return 130
        except ValueError as exc:  # e.g. a resume directory of another run
            raise CLIError(str(exc)) from exc
        except WorkerStartError as exc:  # no Ray worker could build the environment
            print(f"vf-lite: error: {exc}", file=sys.stderr)
            return 1
        wall = time.perf_counter() - t0

    from verifiers_lite.results.sessions import run_duration

    # a resumed run took all its sessions (each recorded in metadata), not just this one
    if out.metadata.get("resumed"):
        wall = run_duration(out.metadata) or wall
    summary = run_summary(out.rows, rollouts, wall, out.pass_criterion)
    summary["sessions"] = len(out.metadata.get("sessions") or [1])
    task_tables = ""
    if len(env_ids) > 1:
        from verifiers_lite.cli.group import per_task_report

        task_tables, summary["tasks"] = per_task_report(
            out.rows, out.metadata.get("tasks") or {}, rollouts, wall, f"vf-lite eval · model {model}")
    if out.metadata.get("cache"):
        summary["cache"] = out.metadata["cache"]
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    plot_path: str | None = None
    if not args.no_plot:
        try:
            plot_path = str(save_reward_histogram(
                out.rewards, run_dir / "reward_hist.png",
                title=f"{args.env_id} · {model} · reward "
                      + format_estimate(summary["reward_mean"], summary["reward_stderr"], summary["reward_ci"]),
            ))
        except ImportError as exc:
            print(f"vf-lite: no plot: {exc}", file=sys.stderr)
    header = f"vf-lite eval {args.env_id} · model {model}"
    print(format_table(summary, header, {"results": str(run_dir), "plot": plot_path}))
    if task_tables:
        print("\n" + task_tables)
    if summary.get("cache"):
        c = summary["cache"]
        print(f"response cache: {c['hits']} hits / {c['misses']} misses ({c['path']})")
    sys.stdout.flush()
    failed = sum(summary["errors"].values())
    crash = next((r["error"] for r in out.rows if (r.get("error") or {}).get("category") == "model_crashed"), None)
    if crash is not None:
        crashed = summary["errors"].get("model_crashed", 0)
        print(f"vf-lite: error: {crashed} rollouts lost to a model server crash: "
              f"{crash.get('message', '').splitlines()[0]}", file=sys.stderr)
        return 1
    if not failed:
        return 0
    first = next(r["error"] for r in out.rows if r.get("error"))
    rerun = f"rerun the failed rollouts with: vf-lite eval {args.env_id} --resume {run_dir}"
    rate = failed / len(out.rows)
    if rate > args.max_error_rate:
        what = f"all {failed}" if failed == len(out.rows) else f"{failed} of {len(out.rows)} ({rate:.0%})"
        print(f"vf-lite: error: {what} rollouts failed (more than --max-error-rate {args.max_error_rate:g}); "
              f"first error: {first.get('message', '').splitlines()[0]}; {rerun}", file=sys.stderr)
        return 1
    print(f"vf-lite: warning: {failed} of {len(out.rows)} rollouts failed; {rerun}", file=sys.stderr)
    return 0

