"""``vf-lite eval ENV_A ENV_B ...``: several environments evaluated as one group, reported per task."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from verifiers_lite.core.records import Row


def load_group(
    env_ids: list[str],
    env_args: dict[str, Any],
    seed: int | None,
    load_one: Callable[[str, dict[str, Any]], Any],
    accepts: Callable[[str, str], bool],
) -> Any:
    """An :class:`EnvGroup` of ``env_ids``. ``env_args`` is keyed by env id (``{"arithmetic":
    {"digits": 2}}``) or is a saved group's ``{"envs": {id: {"env_args": ...}}}``; ``seed`` goes
    to every member that takes one. Raises ValueError for keys that are not among ``env_ids``."""
    from verifiers_lite.envs.env_group import EnvGroup

    if len(set(env_ids)) != len(env_ids):
        raise ValueError(f"environment ids repeat: {env_ids}")
    if "envs" in env_args and isinstance(env_args["envs"], dict):
        per = {k: dict(v.get("env_args") or {}) for k, v in env_args["envs"].items()}
    else:
        per = {k: v for k, v in env_args.items()}
    unknown = sorted(set(per) - set(env_ids))
    if unknown:
        raise ValueError(
            f"--env-args for several environments must be keyed by env id ({env_ids}); "
            f"unknown keys: {unknown}"
        )
    for k, v in per.items():
        if not isinstance(v, dict):
            raise ValueError(f"--env-args[{k!r}] must be a JSON object, got {type(v).__name__}")
    members = []
    for env_id in env_ids:
        args = dict(per.get(env_id) or {})
        if seed is not None and "seed" not in args and accepts(env_id, "seed"):
            args["seed"] = seed
        members.append(load_one(env_id, args))
    return EnvGroup(members, names=env_ids)


def per_task_report(
    rows: list[Row], tasks: dict[str, Any], rollouts: int, wall: float, header: str
) -> tuple[str, dict[str, Any]]:
    """One summary table per task (each under its own pass criterion) and their data."""
    from verifiers_lite.cli.report import format_table, run_summary
    from verifiers_lite.core.pass_criterion import PassCriterion

    text, data = [], {}
    for task in tasks:
        part = [r for r in rows if r.get("task") == task]
        crit = PassCriterion.coerce((tasks.get(task) or {}).get("pass_criterion"))
        data[task] = run_summary(part, rollouts, wall, crit)
        text.append(format_table(data[task], f"{header} · task {task}", {}))
    return "\n\n".join(text), data
