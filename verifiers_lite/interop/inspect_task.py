"""An inspect_ai ``@task`` as an environment: ``vf.load_environment("inspect:file.py@task", **args)``.

The task's own code builds it (datasets, ``FieldSpec``/``record_to_sample``, solvers, scorers);
this library runs it: its scheduler and model clients make every model request, inspect's own
solver and scorer functions shape the conversation and score it. Only the solvers and scorers
listed here run; any other is refused when the task is loaded, before any request, naming it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from verifiers_lite.core.errors import VerifiersError
from verifiers_lite.interop.inspect_extra import inspect_module

SCHEME = "inspect:"

SUPPORTED_SOLVERS = frozenset(
    {
        "system_message",
        "prompt_template",
        "user_message",
        "assistant_message",
        "chain_of_thought",
        "generate",
        "multiple_choice",
        "self_critique",
        "use_tools",
    }
)
SUPPORTED_SCORERS = frozenset(
    {
        "match",
        "includes",
        "exact",
        "pattern",
        "answer",
        "choice",
        "f1",
        "model_graded_qa",
        "model_graded_fact",
    }
)


class UnsupportedInspectTask(VerifiersError, ValueError):
    """The task uses something this library cannot run (a solver, a scorer, a sandbox)."""


def split_spec(spec: str) -> tuple[Path, str | None]:
    """``inspect:path/file.py@task`` (or without the scheme) as (file, task name or None)."""
    body = spec[len(SCHEME) :] if spec.startswith(SCHEME) else spec
    path, _, name = body.partition("@")
    file = Path(path).expanduser()
    if file.suffix != ".py" or not file.is_file():
        raise FileNotFoundError(f"{spec!r}: no inspect task file {file} (expected file.py@task)")
    return file.resolve(), name or None


def _import_file(file: Path) -> Any:
    name = f"_vf_inspect_task_{abs(hash(str(file)))}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def task_functions(module: Any) -> dict[str, Any]:
    """The module's ``@task`` functions by name."""
    registry = inspect_module("inspect_ai._util.registry")
    return {
        name: obj
        for name, obj in vars(module).items()
        if callable(obj) and registry.is_registry_object(obj, type="task")
    }


def build_task(spec: str, task_args: dict[str, Any]) -> Any:
    """The inspect ``Task`` that ``spec`` names, built with ``task_args`` (inspect's own
    ``@task`` function, run in a module imported from the file)."""
    inspect_module("inspect_ai")
    file, name = split_spec(spec)
    tasks = task_functions(_import_file(file))
    if not tasks:
        raise ValueError(f"{file} defines no @task function")
    if name is None:
        if len(tasks) > 1:
            raise ValueError(f"{file} defines {sorted(tasks)}: name one as {file}@<task>")
        name = next(iter(tasks))
    if name not in tasks:
        raise ValueError(f"{file} has no @task {name!r}; it defines {sorted(tasks)}")
    return tasks[name](**task_args)


def _short(obj: Any) -> str:
    registry = inspect_module("inspect_ai._util.registry")
    try:
        return str(registry.registry_info(obj).name).split("/")[-1]
    except ValueError:
        return getattr(obj, "__name__", type(obj).__name__)


def solver_steps(task: Any) -> list[Any]:
    """The task's solvers in order (a chain flattened)."""
    chain = inspect_module("inspect_ai.solver._chain")
    out: list[Any] = []
    todo = [task.solver]
    while todo:
        step = todo.pop(0)
        if isinstance(step, chain.Chain):
            todo = list(step._solvers) + todo
        else:
            out.append(step)
    return out


def check_supported(task: Any) -> None:
    """Refuse a task with a solver, scorer or sample feature this library cannot run, naming it."""
    bad = [_short(s) for s in solver_steps(task) if _short(s) not in SUPPORTED_SOLVERS]
    if bad:
        raise UnsupportedInspectTask(
            f"inspect task {task.name!r}: solver {bad[0]!r} is not supported "
            f"(supported: {', '.join(sorted(SUPPORTED_SOLVERS))})"
        )
    bad = [_short(s) for s in task.scorer or [] if _short(s) not in SUPPORTED_SCORERS]
    if bad or not task.scorer:
        raise UnsupportedInspectTask(
            f"inspect task {task.name!r}: "
            + (f"scorer {bad[0]!r} is not supported" if bad else "has no scorer")
            + f" (supported: {', '.join(sorted(SUPPORTED_SCORERS))})"
        )
    for sample in task.dataset:
        if sample.sandbox or sample.files or sample.setup or task.sandbox:
            raise UnsupportedInspectTask(
                f"inspect task {task.name!r}: sample {sample.id!r} needs a sandbox "
                "(sandbox, files or setup), which is not supported"
            )


def load_inspect_environment(spec: str, **task_args: Any) -> Any:
    """The environment that runs inspect task ``spec`` (``file.py@task``) with ``task_args``.
    Its ``epochs`` is the task's: pass it as ``rollouts_per_example``."""
    from verifiers_lite.interop.inspect_env import InspectTaskEnv

    task = build_task(spec, task_args)
    check_supported(task)
    return InspectTaskEnv(task)
