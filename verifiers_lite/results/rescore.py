"""Re-score a saved run with another rubric: no model request; a run directory given is
re-scored into a new directory (``<run>-rescored`` or ``results_path``), results in hand
(``out.rescore(rubric)``, loaded from disk or not) come back in memory unless a
``results_path`` is given.

Each saved row is turned back into the State it was made from (``state.row_to_state``), each
example's rollouts are scored together by ``rubric.score_group`` (group rewards and advantages
recomputed; one rollout at a time when the run used independent scoring), the rubric's cleanup
runs once per rollout, and the rows are written as a new run whose metadata names the run it
came from and carries the new rubric's fingerprint, so that directory resumes under that rubric.
Rows stream: a run kept on disk is read group by group and written as it is scored.
Rollouts that failed before scoring keep their error and stay unscored; a ``rubric_error`` (the
old rubric's failure) is cleared and scored again. The only requests are the rubric's own (a
judge's).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast

from verifiers_lite.core.errors import cleanup_error
from verifiers_lite.core.records import Row
from verifiers_lite.core.state import row_to_state, state_to_row
from verifiers_lite.core.summary import RunSummary
from verifiers_lite.results import row_index
from verifiers_lite.results.disk_rows import DiskRows
from verifiers_lite.results.export import read_run
from verifiers_lite.results.fingerprint import FINGERPRINT_KEY, rubric_fingerprint
from verifiers_lite.results.run_data import RunData
from verifiers_lite.results.run_metadata import RunMetadata, add_summary
from verifiers_lite.results.store import METADATA_FILE, RESULTS_FILE, ResultsStore, read_rows

if TYPE_CHECKING:
    from verifiers_lite.core.runnable import ScoringRubric

RESCORED_FROM_KEY: Final = "rescored_from"
_GROUPS_IN_FLIGHT = 64

# What the old scoring left on a row beside its scores: the new scoring says its own or nothing.
_OLD_SCORING = frozenset(("judge", "explanations"))


async def rescore_run(
    run: RunData | str | os.PathLike[str],
    rubric: Any,
    *,
    results_path: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
) -> tuple[Sequence[Row], RunMetadata]:
    """The rows and metadata of ``run`` (a run's results or a run directory) re-scored by
    ``rubric``; what :func:`verifiers_lite.rescore` returns as a ``GenerateOutputs``."""
    source, outputs = _load(run)
    rubric, tool_defs = _rubric_and_tools(rubric)
    # A directory given is re-scored into a new directory beside it; results in hand (loaded
    # or not) stay in hand unless a results_path is given.
    target = _target(
        source if isinstance(run, (str, os.PathLike)) else None, results_path, overwrite, source
    )
    rubric.check_reward_funcs()
    meta = outputs.metadata
    totals = RunSummary(rubric.pass_criterion)
    store = _fresh_store(target) if target is not None else None
    kept: list[Row] = []
    try:
        async for group in _rescored_groups(outputs.rows, rubric, meta, tool_defs):
            totals.add_all(group)
            if store is not None:
                store.append_group(group)  # streamed: a large run is never held in memory
            else:
                kept.extend(group)
        metadata = _metadata(meta, totals, rubric, source, target)
        if store is not None:
            store.write_metadata(metadata)  # last: a directory with metadata holds a whole run
    finally:
        if store is not None:
            store.close()
    if store is None:
        return kept, metadata
    on_disk = DiskRows.open(store.results_file, sort=True)
    return (on_disk if on_disk is not None else read_rows(store.results_file)), metadata


def _load(run: Any) -> tuple[Path | None, RunData]:
    if isinstance(run, (str, os.PathLike)):
        path = Path(run)
        if not (path / METADATA_FILE).exists():
            raise FileNotFoundError(
                f"{path} holds no run to re-score (no {METADATA_FILE}; expected a results_path "
                "directory or one written by save())"
            )
        rows, metadata = read_run(path)
        return path, _Loaded(rows, metadata)
    if isinstance(run, RunData):
        if isinstance(run.rows, DiskRows):  # rows read from a run directory: that is the source
            return run.rows.results_file.parent, run
        saved = run.metadata.get("results_path")
        return (Path(saved) if saved else None), run
    raise TypeError(f"rescore takes a GenerateOutputs or a run directory, got {type(run).__name__}")


@dataclass
class _Loaded:
    """A run directory's rows and metadata, as :func:`_load` hands them on."""

    rows: Sequence[Row]
    metadata: RunMetadata


def _rubric_and_tools(rubric: Any) -> tuple[ScoringRubric, list[dict[str, Any]] | None]:
    """What the caller gave, a Rubric or an Environment (its rubric, and its tools' schemas for
    the rebuilt states), told apart here at the door: below, only the rubric's protocol is used."""
    if hasattr(rubric, "rubric") and hasattr(rubric, "rollout"):  # an Environment
        return rubric.rubric, rubric.tool_defs
    if not callable(getattr(rubric, "score_group", None)):
        raise TypeError(f"rescore takes a Rubric (or an Environment), got {type(rubric).__name__}")
    return rubric, None


def _fresh_store(target: Path) -> ResultsStore:
    """The store of the new run; a run replaced there (``overwrite``) is removed first."""
    target.mkdir(parents=True, exist_ok=True)
    for name in (METADATA_FILE, RESULTS_FILE):
        (target / name).unlink(missing_ok=True)
    row_index.remove(target)
    return ResultsStore(target)


def _target(
    default_from: Path | None, results_path: Any, overwrite: bool, source: Path | None
) -> Path | None:
    """Where the re-scored run goes (``results_path``, else ``<default_from>-rescored``, else
    nowhere); an existing run there is refused before any scoring, as is the source itself."""
    if results_path is None and default_from is None:
        return None
    target = Path(results_path) if results_path is not None else Path(f"{default_from}-rescored")
    if source is not None and target.resolve() == source.resolve():
        raise ValueError(
            f"results_path {str(target)!r} is the run being re-scored; re-scoring writes a new run"
        )
    holds_run = (target / METADATA_FILE).exists() or (target / RESULTS_FILE).exists()
    if holds_run and not overwrite:
        raise FileExistsError(
            f"{target} already holds a run; pass another results_path "
            "(vf-lite rescore --output) or overwrite=True (--overwrite) to replace it"
        )
    return target


async def _rescored_groups(
    rows: Iterable[Row],
    rubric: ScoringRubric,
    meta: RunMetadata,
    tool_defs: list[dict[str, Any]] | None,
) -> AsyncIterator[list[Row]]:
    """The rows re-scored, one group (an example's rollouts; one rollout under independent
    scoring) at a time, in the order groups complete in ``rows``. Only groups still incomplete
    and one batch of complete ones are held, so rows stream from disk."""
    independent = bool(meta.get("independent_scoring"))
    sizes = Counter(r.get("example_id") for r in rows) if not independent else Counter()
    pending: dict[Any, list[Row]] = {}
    batch: list[list[Row]] = []
    for row in rows:
        if independent:
            batch.append([row])
        else:
            group = pending.setdefault(row.get("example_id"), [])
            group.append(row)
            if len(group) == sizes[row.get("example_id")]:
                batch.append(pending.pop(row.get("example_id")))
        if len(batch) >= _GROUPS_IN_FLIGHT:
            for scored in await _score_batch(batch, rubric, meta, tool_defs):
                yield scored
            batch = []
    for scored in await _score_batch(batch, rubric, meta, tool_defs):
        yield scored


async def _score_batch(
    groups: list[list[Row]],
    rubric: ScoringRubric,
    meta: RunMetadata,
    tool_defs: list[dict[str, Any]] | None,
) -> list[list[Row]]:
    """Each group's rows rebuilt as States, scored together, cleaned up once each, and turned
    back into rows that keep the old row's other fields (attempts, input hash, endpoint)."""
    model, sampling = str(meta.get("model") or ""), meta.get("sampling_args")

    async def one(old_rows: list[Row]) -> list[Row]:
        states = [
            row_to_state(r, model=model, sampling_args=sampling, tool_defs=tool_defs)
            for r in old_rows
        ]
        started = time.perf_counter()
        await rubric.score_group(states)
        for s in states:
            s.setdefault("timing", {})["scoring_ms"] = (time.perf_counter() - started) * 1000
            try:
                await rubric.cleanup(s)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                s["error"] = s.get("error") or cleanup_error(type(rubric).__name__, exc)
        return [
            cast(
                Row, {**{k: v for k, v in old.items() if k not in _OLD_SCORING}, **state_to_row(s)}
            )
            for old, s in zip(old_rows, states, strict=True)
        ]

    return list(await asyncio.gather(*(one(g) for g in groups)))


def _metadata(
    old: RunMetadata,
    totals: RunSummary,
    rubric: ScoringRubric,
    source: Path | None,
    target: Path | None,
) -> RunMetadata:
    """The source run's metadata with the new scores' summary, pass criterion and fingerprint,
    and where it came from."""
    meta = old.copy()
    add_summary(meta, totals.summary())
    meta["status"] = "completed_with_errors" if totals.errors else "completed"
    meta["score_rollouts"] = True
    meta["pass_criterion"] = rubric.pass_criterion.to_dict()
    task_rubrics = rubric.task_rubrics
    if isinstance(meta.get("tasks"), dict):
        meta["tasks"] = {
            name: {
                **info,
                **(
                    {"pass_criterion": task_rubrics[name].pass_criterion.to_dict()}
                    if name in task_rubrics
                    else {}
                ),
            }
            for name, info in meta["tasks"].items()
        }
    old_fp = old.get(FINGERPRINT_KEY)
    new_rubric = rubric_fingerprint(rubric)
    if isinstance(old_fp, dict):
        meta[FINGERPRINT_KEY] = {**old_fp, "rubric": new_rubric, "score_rollouts": True}
    meta[RESCORED_FROM_KEY] = {
        "path": str(source.resolve())
        if source is not None
        else None,  # absolute: the viewer finds it
        "rubric": old_fp.get("rubric") if isinstance(old_fp, dict) else None,
        "status": old.get("status"),
        "reward_mean": old.get("reward_mean"),
        "time": time.time(),
    }
    if target is not None:
        meta["results_path"] = str(target)
    else:
        # in memory: the source's directory does not hold these scores
        meta.pop("results_path", None)
    return meta
