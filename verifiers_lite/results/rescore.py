"""Re-score a saved run with another rubric: no model request, a new run directory.

Each saved row is turned back into the State it was made from (``state.row_to_state``), each
example's rollouts are scored together by ``rubric.score_group`` (group rewards and advantages
recomputed; one rollout at a time when the run used independent scoring), the rubric's cleanup
runs once per rollout, and the rows are written as a new run whose metadata names the run it
came from and carries the new rubric's fingerprint, so that directory resumes under that rubric.
Rollouts that failed before scoring keep their error and stay unscored; a ``rubric_error`` (the
old rubric's failure) is cleared and scored again. The only requests are the rubric's own (a
judge's).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from verifiers_lite.errors import cleanup_error
from verifiers_lite.records import State
from verifiers_lite.results.fingerprint import FINGERPRINT_KEY, rubric_fingerprint
from verifiers_lite.results.metrics import PassCriterion
from verifiers_lite.results.outputs import GenerateOutputs, summarize_rows
from verifiers_lite.results.store import METADATA_FILE, RESULTS_FILE, ResultsStore
from verifiers_lite.state import row_to_state, state_to_row

RESCORED_FROM_KEY = "rescored_from"
_GROUPS_IN_FLIGHT = 64


async def rescore_async(
    run: GenerateOutputs | str | os.PathLike[str], rubric: Any, *,
    results_path: str | os.PathLike[str] | None = None, overwrite: bool = False,
) -> GenerateOutputs:
    """Apply ``rubric`` to the saved rollouts of ``run`` (a :class:`GenerateOutputs` or a run
    directory); see :func:`rescore`."""
    source, outputs = _load(run)
    rubric, tool_defs = _rubric_and_tools(rubric)
    target = _target(source, results_path, overwrite)
    rubric.check_reward_funcs()
    meta = outputs.metadata
    states = [row_to_state(r, model=str(meta.get("model") or ""), sampling_args=meta.get("sampling_args"),
                           tool_defs=tool_defs) for r in outputs.rows]
    await _score(rubric, states, bool(meta.get("independent_scoring")))
    rows = [{**{k: v for k, v in old.items() if k != "judge"}, **state_to_row(s)}
            for old, s in zip(outputs.rows, states, strict=True)]
    result = GenerateOutputs(rows=rows, metadata=_metadata(meta, rows, rubric, source, target))
    if target is not None:
        store = ResultsStore(target)
        target.mkdir(parents=True, exist_ok=True)
        store.rewrite(rows)
        store.write_metadata(result.metadata)  # last: a directory with metadata holds a whole run
    return result


def rescore(
    run: GenerateOutputs | str | os.PathLike[str], rubric: Any, *,
    results_path: str | os.PathLike[str] | None = None, overwrite: bool = False,
) -> GenerateOutputs:
    """Score the saved rollouts of ``run`` (a :class:`GenerateOutputs` or a run directory) with
    ``rubric`` (a Rubric, or an Environment: its rubric and tools), sending no model request.

    Group rewards and advantages are recomputed per example; errored rollouts stay unscored.
    The result is written to ``results_path`` (default for a run directory: ``<dir>-rescored``;
    for a GenerateOutputs: not written); an existing run there is refused unless ``overwrite``.
    Works in scripts, notebooks and running event loops (``rescore_async`` is the coroutine).
    """
    from verifiers_lite.sync import run_sync

    return run_sync(rescore_async(run, rubric, results_path=results_path, overwrite=overwrite))


def _load(run: Any) -> tuple[Path | None, GenerateOutputs]:
    if isinstance(run, GenerateOutputs):
        saved = run.metadata.get("results_path")
        return (Path(saved) if saved else None), run
    if isinstance(run, (str, os.PathLike)):
        from verifiers_lite.results.export import load_results

        path = Path(run)
        if not (path / METADATA_FILE).exists():
            raise FileNotFoundError(f"{path} holds no run to re-score (no {METADATA_FILE}; expected a results_path "
                                    "directory or one written by save())")
        return path, load_results(path)
    raise TypeError(f"rescore takes a GenerateOutputs or a run directory, got {type(run).__name__}")


def _rubric_and_tools(rubric: Any) -> tuple[Any, list[dict[str, Any]] | None]:
    if hasattr(rubric, "rubric") and hasattr(rubric, "rollout"):  # an Environment
        return rubric.rubric, getattr(rubric, "tool_defs", None)
    if not callable(getattr(rubric, "score_group", None)):
        raise TypeError(f"rescore takes a Rubric (or an Environment), got {type(rubric).__name__}")
    return rubric, None


def _target(source: Path | None, results_path: Any, overwrite: bool) -> Path | None:
    """Where the re-scored run goes; an existing run there is refused before any scoring."""
    if results_path is None and source is None:
        return None
    target = Path(results_path) if results_path is not None else Path(f"{source}-rescored")
    if source is not None and target.resolve() == source.resolve():
        raise ValueError(f"results_path {str(target)!r} is the run being re-scored; re-scoring writes a new run")
    holds_run = (target / METADATA_FILE).exists() or (target / RESULTS_FILE).exists()
    if holds_run and not overwrite:
        raise FileExistsError(f"{target} already holds a run; pass another results_path "
                              "(vf-lite rescore --output) or overwrite=True (--overwrite) to replace it")
    return target


async def _score(rubric: Any, states: list[State], independent: bool) -> None:
    """Each example's rollouts as one group (each rollout alone under independent scoring),
    then the rubric's cleanup once per rollout; a bounded number of groups at a time."""
    groups: dict[Any, list[State]] = defaultdict(list)
    for i, s in enumerate(states):
        groups[("rollout", i) if independent else s.get("example_id")].append(s)
    limit = asyncio.Semaphore(_GROUPS_IN_FLIGHT)

    async def one(group: list[State]) -> None:
        async with limit:
            started = time.perf_counter()
            await rubric.score_group(group)
            for s in group:
                s.setdefault("timing", {})["scoring_ms"] = (time.perf_counter() - started) * 1000
                try:
                    await rubric.cleanup(s)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    s["error"] = s.get("error") or cleanup_error(type(rubric).__name__, exc)

    await asyncio.gather(*(one(g) for g in groups.values()))


def _metadata(old: dict[str, Any], rows: list[dict[str, Any]], rubric: Any, source: Path | None,
              target: Path | None) -> dict[str, Any]:
    """The source run's metadata with the new scores' summary, pass criterion and fingerprint,
    and where it came from."""
    meta = {**old, **summarize_rows(rows)}
    meta["status"] = "completed_with_errors" if any(r.get("error") for r in rows) else "completed"
    meta["score_rollouts"] = True
    meta["pass_criterion"] = PassCriterion.coerce(getattr(rubric, "pass_criterion", None)).to_dict()
    task_rubrics = getattr(rubric, "task_rubrics", None)
    if isinstance(meta.get("tasks"), dict) and isinstance(task_rubrics, dict):
        meta["tasks"] = {name: {**info, **({"pass_criterion": task_rubrics[name].pass_criterion.to_dict()}
                                           if name in task_rubrics else {})}
                         for name, info in meta["tasks"].items()}
    old_fp = old.get(FINGERPRINT_KEY)
    new_rubric = rubric_fingerprint(rubric)
    if isinstance(old_fp, dict):
        meta[FINGERPRINT_KEY] = {**old_fp, "rubric": new_rubric, "score_rollouts": True}
    meta[RESCORED_FROM_KEY] = {
        "path": str(source) if source is not None else None,
        "rubric": old_fp.get("rubric") if isinstance(old_fp, dict) else None,
        "status": old.get("status"),
        "reward_mean": old.get("reward_mean"),
        "time": time.time(),
    }
    if target is not None:
        meta["results_path"] = str(target)
    return meta
