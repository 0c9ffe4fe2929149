"""The viewer's JSON API: runs, their rows, one rollout, and runs compared, over the run registry."""

from __future__ import annotations

import threading
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse

from verifiers_lite.core import columns
from verifiers_lite.core.errors import RunFormatError
from verifiers_lite.results.labels import run_facts, run_labels
from verifiers_lite.results.paired import ExamplesMismatchError, compare_scores, run_few_shot
from verifiers_lite.results.row_index import StaleRowsError
from verifiers_lite.ui.viewer.query import RowFilter, compare_examples, example_scores
from verifiers_lite.ui.viewer.rows import json_safe, row_summary, strip_token_ids
from verifiers_lite.ui.viewer.runs import Run, RunRegistry

MAX_PAGE = 500
STATS_BUDGET_S = 0.5  # a summary waits this long for indexing, then shows what is indexed so far


class BackgroundIndexer:
    """Indexes the rest of a large file on a thread after a first page was served from its start
    (one thread per run at a time)."""

    def __init__(self) -> None:
        self._running: set[str] = set()
        self._lock = threading.Lock()

    def finish(self, run: Run) -> None:
        if run.index.at_eof:
            return
        with self._lock:
            if run.run_id in self._running:
                return
            self._running.add(run.run_id)

        def work() -> None:
            try:
                run.index.scan()
            finally:
                with self._lock:
                    self._running.discard(run.run_id)

        threading.Thread(target=work, name=f"vf-view-index-{run.run_id}", daemon=True).start()


def runs_router(registry: RunRegistry, indexer: BackgroundIndexer) -> APIRouter:
    """``/api/runs``: the runs, one run's summary, a page of its rows, one rollout."""
    router = APIRouter(prefix="/api/runs")

    @router.get("")
    def list_runs() -> JSONResponse:
        runs = []
        for run in registry.refresh():
            runs.append(run.summary(budget_s=STATS_BUDGET_S))
            indexer.finish(run)
        return JSONResponse(json_safe({"runs": runs}))

    @router.get("/{run_id}")
    def run_detail(run_id: str) -> JSONResponse:
        run = _get_run(registry, run_id)
        try:
            body = run.detail(budget_s=STATS_BUDGET_S)
        except RunFormatError as exc:
            raise HTTPException(409, str(exc)) from exc
        source = (body["metadata"].get("rescored_from") or {}).get("path")
        found = registry.find(source) if isinstance(source, str) else None
        # the page links to it
        body["rescored_from_run"] = found.run_id if found is not None else None
        indexer.finish(run)
        return JSONResponse(json_safe(body))

    @router.get("/{run_id}/rows")
    def rows(
        request: Request,
        run_id: str,
        offset: int = Query(0, ge=0),
        limit: int = Query(50, ge=1, le=MAX_PAGE),
        sort: str = Query("", max_length=200),
        q: str = Query("", max_length=500),
        error: str = Query("", max_length=100),
        stop_reason: str = Query("", max_length=100),
        example_id: str | None = Query(None, max_length=500),
        min_reward: float | None = None,
        max_reward: float | None = None,
        metric: str = Query("", max_length=200),
        min_metric: float | None = None,
        max_metric: float | None = None,
    ) -> JSONResponse:
        run = _get_run(registry, run_id)
        f = RowFilter(
            sort,
            q,
            error,
            stop_reason,
            example_id,
            min_reward,
            max_reward,
            metric,
            min_metric,
            max_metric,
            _ranges(request),
        )
        return JSONResponse(json_safe(_rows_page(run, f, offset, limit, indexer)))

    @router.get("/{run_id}/rows/{example_id}/{rollout_index}")
    def row_detail(run_id: str, example_id: str, rollout_index: int) -> JSONResponse:
        return JSONResponse(
            json_safe(_rollout(_get_run(registry, run_id), example_id, rollout_index))
        )

    return router


def compare_router(registry: RunRegistry) -> APIRouter:
    """``/api/compare``: runs of one environment side by side, each paired with the first."""
    router = APIRouter()

    @router.get("/api/compare")
    def compare(
        runs: Annotated[list[str], Query(min_length=2, max_length=8)],
        limit: Annotated[int, Query(ge=1, le=5000)] = 200,
    ) -> JSONResponse:
        return JSONResponse(json_safe(_comparison([_get_run(registry, r) for r in runs], limit)))

    return router


def _ranges(request: Request) -> tuple[tuple[str, float | None, float | None], ...]:
    """``min_NAME``/``max_NAME`` of every range-filtered column but the reward (its own
    parameters); a bound that is not a number is a 422."""
    out = []
    for column in columns.current():
        if column.filter != "range" or column.name == "reward":
            continue
        bounds = []
        for end in ("min", "max"):
            text = request.query_params.get(f"{end}_{column.name}")
            try:
                bounds.append(None if text in (None, "") else float(text))
            except ValueError:
                raise HTTPException(
                    422, f"{end}_{column.name} must be a number, got {text!r}"
                ) from None
        if bounds != [None, None]:
            out.append((column.name, bounds[0], bounds[1]))
    return tuple(out)


def _get_run(registry: RunRegistry, run_id: str) -> Run:
    run = registry.get(run_id)
    if run is None:
        raise HTTPException(404, f"no run {run_id!r}")
    return run


def _rows_page(
    run: Run, f: RowFilter, offset: int, limit: int, indexer: BackgroundIndexer
) -> dict[str, Any]:
    """A page of the rows ``f`` selects. An unfiltered page needs only the file's start (the
    rest is indexed in the background); a filter or a sort needs the whole file."""
    if f.is_plain:
        run.index.scan(min_rows=offset + limit)
        indexer.finish(run)
    else:
        run.index.scan()
    try:
        f.check(run.index)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from exc
    for attempt in range(3):
        generation = run.index.generation
        positions = run.select(f)
        try:
            page_rows = run.index.read(positions[offset : offset + limit], generation)
            break
        except (StaleRowsError, ValueError):  # the file was replaced under us: start over
            if attempt == 2:
                raise HTTPException(503, "results file changing too fast; retry") from None
            run.index.scan()
    return {
        "total": len(positions),
        "num_rows": len(run.index),
        "complete": run.index.at_eof,
        "status": run.status(run.metadata()),
        "offset": offset,
        "limit": limit,
        "rows": [row_summary(r) for r in page_rows],
    }


def _rollout(run: Run, example_id: str, rollout_index: int) -> dict[str, Any]:
    """One rollout in full (its token ids counted, not sent) and the indices of its siblings."""
    run.index.scan()
    cols = run.index.cols
    same_example = run.index.positions_of(example_id)
    matches = [i for i in same_example if cols.rollout_index[i] == rollout_index]
    if not matches:
        raise HTTPException(
            404, f"no rollout {rollout_index} of example {example_id!r} in run {run.run_id!r}"
        )
    try:
        row = run.index.read(matches[-1:])[0]
    except StaleRowsError:
        raise HTTPException(503, "results file being rewritten; retry") from None
    tokens = strip_token_ids(row)
    siblings = sorted(cols.rollout_index[i] for i in same_example)
    return {"run_id": run.run_id, "row": row, "token_counts": tokens, "rollout_indices": siblings}


def _comparison(chosen: list[Run], limit: int) -> dict[str, Any]:
    envs = {r.metadata().get("env_id") for r in chosen}
    if len(envs) > 1:
        raise HTTPException(
            422, f"compare needs runs of one environment, got {sorted(map(str, envs))}"
        )
    for r in chosen:
        r.index.scan()
    try:
        metas = [r.metadata() for r in chosen]
        scores = [
            example_scores(r.index, run_few_shot(m)) for r, m in zip(chosen, metas, strict=True)
        ]
        labels = run_labels(
            [run_facts(m, r.first_prompt()) for r, m in zip(chosen, metas, strict=True)]
        )
    except StaleRowsError:
        raise HTTPException(503, "results file being rewritten; retry") from None
    # Each run against the first, paired over shared examples (vf.compare_runs' figures);
    # runs holding other inputs under the same ids get no paired figures, only the reason.
    paired, paired_error = [], None
    try:
        paired = [
            compare_scores(scores[0], s, (labels[0], labels[i + 1])).to_dict()
            for i, s in enumerate(scores[1:])
        ]
    except ExamplesMismatchError as exc:
        paired_error = str(exc)
    examples = compare_examples(scores)
    runs_out = [{**r.summary(), "label": label} for r, label in zip(chosen, labels, strict=True)]
    return {
        "runs": runs_out,
        "num_examples": len(examples),
        "paired": paired,
        "paired_error": paired_error,
        "examples": examples[:limit],
        "diff": "last - first" if len(chosen) == 2 else "max - min",
    }
