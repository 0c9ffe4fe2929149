"""``vf-lite eval``: load the environment (or a group of them), run it against a model, save the
run and report it: the summary table, summary.json, the reward plot and an exit code that says
whether too many rollouts failed."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifiers_lite.cli.endpoints import model_endpoints
from verifiers_lite.cli.errors import CLIError
from verifiers_lite.cli.parser import DEFAULT_NUM_EXAMPLES, DEFAULT_ROLLOUTS

if TYPE_CHECKING:
    from verifiers_lite.core.model_client import ModelClientLike


def run_eval(args: argparse.Namespace) -> int:
    """``vf-lite eval``: run, print the summary table, write results and the reward plot."""
    from verifiers_lite.executors.ray import WorkerStartError

    _check_numbers(args)
    env_ids = list(args.env_id) if isinstance(args.env_id, list) else [args.env_id]
    args.env_id = "+".join(env_ids)  # a group's name: in run directories, messages, --resume
    env_args = parse_env_args(args.env_args)
    run_dir, saved = _resumed_run(args)
    if run_dir is not None and args.env_args is None:
        env_args = dict(saved.get("env_args") or {})
    env = _load_eval_env(args, env_ids, env_args)
    executor = _executor(args)
    plan = _EvalPlan.of(args, saved, grouped=len(env_ids) > 1)
    with model_endpoints(args, saved.get("model")) as (client, model, where):
        run_dir = run_dir or _new_run_dir(Path(args.save_dir), args.env_id, model)
        run_dir.mkdir(parents=True, exist_ok=True)
        print(
            f"vf-lite: {args.env_id} x {model} ({where}): {plan.num_examples} examples x {plan.rollouts} "
            f"rollouts -> {run_dir}",
            file=sys.stderr,
        )
        t0 = time.perf_counter()
        try:
            out = _evaluate(env, client, model, args, plan, executor, run_dir)
        except KeyboardInterrupt:
            print(
                f"\nvf-lite: interrupted; finished groups are saved. Resume with:\n"
                f"  vf-lite eval {args.env_id} --resume {run_dir}",
                file=sys.stderr,
            )
            return 130
        except ValueError as exc:  # e.g. a resume directory of another run
            raise CLIError(str(exc)) from exc
        except WorkerStartError as exc:  # no Ray worker could build the environment
            print(f"vf-lite: error: {exc}", file=sys.stderr)
            return 1
        wall = time.perf_counter() - t0
    summary = _report(args, out, model, plan.rollouts, wall, run_dir, grouped=len(env_ids) > 1)
    return _exit_code(args, summary, out.rows, run_dir)


@dataclass
class _EvalPlan:
    """How much to run and how to sample: the options given, else the resumed run's, else defaults."""

    num_examples: int | dict[str, int]
    rollouts: int
    sampling_args: dict[str, Any]

    @classmethod
    def of(cls, args: argparse.Namespace, saved: dict[str, Any], grouped: bool) -> _EvalPlan:
        num_examples: int | dict[str, int] = (
            args.num_examples or saved.get("num_examples") or DEFAULT_NUM_EXAMPLES
        )
        if grouped and args.num_examples is None and saved.get("tasks"):
            # a group's saved count is over all tasks; resume with each task's own
            num_examples = {t: int(v.get("num_examples", 0)) for t, v in saved["tasks"].items()}
        rollouts = (
            args.rollouts_per_example or saved.get("rollouts_per_example") or DEFAULT_ROLLOUTS
        )
        sampling_args: dict[str, Any] = dict(saved.get("sampling_args") or {}) if saved else {}
        if args.max_tokens is not None:
            sampling_args["max_tokens"] = args.max_tokens
        if args.temperature is not None:
            sampling_args["temperature"] = args.temperature
        return cls(num_examples, rollouts, sampling_args)


def _evaluate(
    env: Any,
    client: ModelClientLike,
    model: str,
    args: argparse.Namespace,
    plan: _EvalPlan,
    executor: Any,
    run_dir: Path,
) -> Any:
    from verifiers_lite.ui.terminal_progress import TqdmProgress

    return env.evaluate_sync(
        client,
        model,
        num_examples=plan.num_examples,
        rollouts_per_example=plan.rollouts,
        max_concurrent=args.max_concurrent,
        sampling_args=plan.sampling_args or None,
        results_path=str(run_dir),
        progress=False if args.quiet else TqdmProgress(args.env_id, warn=False),
        executor=executor,
        rerun_errors=not args.keep_errors,
        cache=args.cache,
        allow_client_change=args.allow_client_change,
        max_cost_usd=args.max_cost_usd,
        max_tokens_total=args.max_tokens_total,
        max_wall_s=args.max_wall_s,
    )


# -- before the run: what to run, and where its results go ---------------------------------------


def parse_env_args(text: str | None) -> dict[str, Any]:
    """``-a`` JSON -> dict, with a clear error for anything else."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CLIError(
            f"--env-args is not valid JSON ({exc.msg} at char {exc.pos}): {text!r}"
        ) from exc
    if not isinstance(value, dict):
        raise CLIError(
            f"--env-args must be a JSON object like '{{\"seed\": 1}}', got {type(value).__name__}"
        )
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
    if args.allow_client_change and args.resume is None:
        raise CLIError("--allow-client-change only applies with --resume")
    if args.max_concurrent != "auto" and args.max_concurrent < 1:
        raise CLIError(f"--max-concurrent must be >= 1 or 'auto', got {args.max_concurrent}")
    for flag in ("max_cost_usd", "max_tokens_total", "max_wall_s"):
        value = getattr(args, flag)
        if value is not None and not (value > 0 and math.isfinite(value)):
            raise CLIError(f"--{flag.replace('_', '-')} must be a positive number, got {value}")
    if args.max_tokens is not None and args.max_tokens < 1:
        raise CLIError(f"--max-tokens must be >= 1, got {args.max_tokens}")
    if args.temperature is not None and args.temperature < 0:
        raise CLIError(f"--temperature must be >= 0, got {args.temperature}")
    if args.parallel is not None and args.parallel < 1:
        raise CLIError(f"--parallel must be >= 1, got {args.parallel}")
    if args.timeout <= 0:
        raise CLIError(f"--timeout must be positive, got {args.timeout}")
    if args.slots is not None and args.slots < 1:
        raise CLIError(f"--slots must be >= 1, got {args.slots}")
    for url in args.base_url or []:
        if not url.startswith(("http://", "https://")):
            raise CLIError(f"--base-url must be an http(s) URL, got {url!r}")


def _resumed_run(args: argparse.Namespace) -> tuple[Path | None, dict[str, Any]]:
    """With ``--resume``: the run directory and its saved metadata; else (None, {})."""
    if args.resume is None:
        return None, {}
    root = Path(args.save_dir)
    run_dir = (
        _find_latest_run(root, args.env_id, args.model)
        if args.resume == "latest"
        else Path(args.resume)
    )
    meta_file = run_dir / "metadata.json"
    if not meta_file.exists():
        raise CLIError(f"--resume: {run_dir} holds no run (no metadata.json)")
    return run_dir, json.loads(meta_file.read_text())


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "model"


def _find_latest_run(root: Path, env_id: str, model: str | None) -> Path:
    pattern = f"{_slug(env_id)}--{_slug(model)}" if model else f"{_slug(env_id)}--*"
    runs = sorted(
        p for d in root.glob(pattern) for p in d.iterdir() if (p / "metadata.json").exists()
    )
    if not runs:
        raise CLIError(f"--resume: no earlier run of {env_id!r} under {root}/ to resume")
    return max(runs, key=lambda p: p.name)


def _new_run_dir(root: Path, env_id: str, model: str) -> Path:
    run_dir = root / f"{_slug(env_id)}--{_slug(model)}" / time.strftime("%Y%m%d-%H%M%S")
    while run_dir.exists():  # two runs in one second
        run_dir = run_dir.with_name(run_dir.name + "-1")
    return run_dir


def _load_eval_env(args: argparse.Namespace, env_ids: list[str], env_args: dict[str, Any]) -> Any:
    """The environment, or the group of them; ``--seed`` goes to each one that takes a seed."""
    if len(env_ids) > 1:
        from verifiers_lite.cli.group import load_group

        try:
            return load_group(env_ids, env_args, args.seed, load_env, accepts)
        except ValueError as exc:
            raise CLIError(str(exc)) from exc
    if args.seed is not None and "seed" not in env_args:
        if not accepts(args.env_id, "seed"):
            raise CLIError(f"--seed: environment {args.env_id!r} takes no seed argument")
        env_args["seed"] = args.seed
    return load_env(args.env_id, env_args)


def load_env(env_id: str, env_args: dict[str, Any]) -> Any:
    """``vf.load_environment``, its refusals as usage errors."""
    import verifiers_lite as vf

    try:
        return vf.load_environment(env_id, **env_args)
    except ValueError as exc:
        raise CLIError(str(exc)) from exc
    except TypeError as exc:
        raise CLIError(f"bad --env-args for {env_id!r}: {exc}") from exc


def accepts(env_id: str, name: str) -> bool:
    """Whether ``env_id``'s ``load_environment`` takes the argument ``name``."""
    import inspect

    from verifiers_lite.core.registry import environment_loader

    try:
        loader = environment_loader(env_id)
    except ImportError:
        return False
    if loader is None:
        return False
    params = inspect.signature(loader).parameters
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _executor(args: argparse.Namespace) -> Any:
    """A RayExecutor when --ray-workers is given, else None (in-process)."""
    if args.ray_workers is None:
        if args.ray_address is not None:
            raise CLIError("--ray-address needs --ray-workers N")
        return None
    if args.ray_workers < 1:
        raise CLIError(f"--ray-workers must be >= 1, got {args.ray_workers}")
    if args.max_concurrent == "auto":
        raise CLIError(
            "--max-concurrent auto adapts this process's requests; with --ray-workers give a number"
        )
    from verifiers_lite._util.cpus import usable_cpus
    from verifiers_lite.executors.ray import RayExecutor

    return RayExecutor(
        num_workers=args.ray_workers,
        address=args.ray_address,
        init_kwargs=None if args.ray_address else {"num_cpus": usable_cpus()},
    )


# -- after the run: the report and the exit code -------------------------------------------------


def _report(
    args: argparse.Namespace,
    out: Any,
    model: str,
    rollouts: int,
    wall: float,
    run_dir: Path,
    grouped: bool,
) -> dict[str, Any]:
    """Write summary.json and the reward plot, print the table(s); the summary."""
    from verifiers_lite.cli.report import format_table, run_summary
    from verifiers_lite.results.sessions import run_duration

    # a resumed run took all its sessions (each recorded in metadata), not just this one
    if out.metadata.get("resumed"):
        wall = run_duration(out.metadata) or wall
    summary = run_summary(out.rows, rollouts, wall, out.pass_criterion)
    summary["sessions"] = len(out.metadata.get("sessions") or [1])
    task_tables = ""
    if grouped:
        from verifiers_lite.cli.group import per_task_report

        task_tables, summary["tasks"] = per_task_report(
            out.rows,
            out.metadata.get("tasks") or {},
            rollouts,
            wall,
            f"vf-lite eval · model {model}",
        )
    if out.metadata.get("cache"):
        summary["cache"] = out.metadata["cache"]
    summary.update(_run_notes(out.metadata))
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    plot_path = (
        None
        if args.no_plot
        else _reward_plot(out.rewards, summary, run_dir, f"{args.env_id} · {model}")
    )
    print(
        format_table(
            summary,
            f"vf-lite eval {args.env_id} · model {model}",
            {"results": str(run_dir), "plot": plot_path},
        )
    )
    if task_tables:
        print("\n" + task_tables)
    if summary.get("cache"):
        c = summary["cache"]
        print(f"response cache: {c['hits']} hits / {c['misses']} misses ({c['path']})")
    sys.stdout.flush()
    return summary


def _run_notes(metadata: Any) -> dict[str, str]:
    """What the table says beyond the rows: a budget that stopped the run (``stopped``), and
    each endpoint's adaptive concurrency limit (``concurrency``)."""
    notes: dict[str, str] = {}
    stopped = (metadata.get("budget") or {}).get("stopped")
    if stopped:
        notes["stopped"] = stopped
    adaptive = [
        f"{e.get('name')}: {a['limit']} at the end (peak {a['peak_limit']}, "
        f"{a['refusals']} refused)"
        for e in metadata.get("endpoints") or []
        if isinstance(a := e.get("adaptive"), dict)
    ]
    if adaptive:
        notes["concurrency"] = "auto; " + "; ".join(adaptive)
    return notes


def _reward_plot(
    rewards: list[float], summary: dict[str, Any], run_dir: Path, title: str
) -> str | None:
    """reward_hist.png, titled with the mean and its interval; None without matplotlib."""
    from verifiers_lite.cli.report import save_reward_histogram
    from verifiers_lite.stats.error_bars import format_estimate

    try:
        estimate = format_estimate(
            summary["reward_mean"], summary["reward_stderr"], summary["reward_ci"]
        )
        return str(
            save_reward_histogram(
                rewards, run_dir / "reward_hist.png", title=f"{title} · reward {estimate}"
            )
        )
    except ImportError as exc:
        print(f"vf-lite: no plot: {exc}", file=sys.stderr)
        return None


def _exit_code(args: argparse.Namespace, summary: dict[str, Any], rows: Any, run_dir: Path) -> int:
    """1 when a model server crashed or more than ``--max-error-rate`` of the rollouts failed."""
    failed = sum(summary["errors"].values())
    crash = next(
        (r["error"] for r in rows if (r.get("error") or {}).get("category") == "model_crashed"),
        None,
    )
    if crash is not None:
        crashed = summary["errors"].get("model_crashed", 0)
        print(
            f"vf-lite: error: {crashed} rollouts lost to a model server crash: "
            f"{crash.get('message', '').splitlines()[0]}",
            file=sys.stderr,
        )
        return 1
    from verifiers_lite.cli.report import traceback_report

    where = traceback_report(rows)  # a tool that raised fails no rollout: said with no failures too
    if where is not None:
        print(where, file=sys.stderr)
    if not failed:
        return 0
    first = next(r["error"] for r in rows if r.get("error"))
    rerun = f"rerun the failed rollouts with: vf-lite eval {args.env_id} --resume {run_dir}"
    rate = failed / len(rows)
    if rate > args.max_error_rate:
        what = f"all {failed}" if failed == len(rows) else f"{failed} of {len(rows)} ({rate:.0%})"
        print(
            f"vf-lite: error: {what} rollouts failed (more than --max-error-rate {args.max_error_rate:g}); "
            f"first error: {first.get('message', '').splitlines()[0]}; {rerun}",
            file=sys.stderr,
        )
        return 1
    print(f"vf-lite: warning: {failed} of {len(rows)} rollouts failed; {rerun}", file=sys.stderr)
    return 0
