"""The viewer's FastAPI app: JSON API over the run registry, the page and its static assets."""

from __future__ import annotations

import hmac
import threading
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Annotated

from fastapi import FastAPI, HTTPException, Query, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse

from verifiers_lite.results.labels import run_facts, run_labels
from verifiers_lite.results.paired import ExamplesMismatchError, compare_scores
from verifiers_lite.viewer.index import StaleIndexError
from verifiers_lite.viewer.query import RowFilter, compare_examples, example_scores
from verifiers_lite.viewer.rows import json_safe, row_summary, strip_token_ids
from verifiers_lite.viewer.runs import Run, RunRegistry

TOKEN_COOKIE = "vf_view_token"
MAX_PAGE = 500
STATS_BUDGET_S = 0.5  # a summary waits this long for indexing, then shows what is indexed so far
_ASSETS = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}
_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
# Scripts and styles only from this server: even a rendering bug could not run injected code.
_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'")


def asset(name: str) -> str:
    """A static asset shipped in the package (``index.html``, ``app.js``, ``app.css``)."""
    return (resources.files("verifiers_lite.viewer") / "static" / name).read_text(encoding="utf-8")


def _host_name(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header.split("]")[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def create_viewer_app(registry: RunRegistry, token: str | None = None) -> FastAPI:
    """The app over ``registry``'s runs. With ``token``, every request must carry it (query
    ``?token=``, ``Authorization: Bearer`` or the cookie set on the first visit); without one,
    only loopback Host names are answered (a web page elsewhere cannot rebind a name onto us)."""
    app = FastAPI(title="vf-lite view", docs_url=None, redoc_url=None, openapi_url=None)
    cache: dict[str, str] = {}
    background: set[str] = set()
    bg_lock = threading.Lock()

    @app.middleware("http")
    async def guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        given = request.query_params.get("token") or request.cookies.get(TOKEN_COOKIE) or ""
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        if token is not None:
            if not hmac.compare_digest(given.encode(), token.encode()):
                return JSONResponse({"detail": "token required: open the URL vf-lite view printed"},
                                    status_code=401)
        elif _host_name(request.headers.get("host", "")) not in _LOOPBACK_HOSTS:
            return JSONResponse({"detail": "this viewer only answers loopback host names"}, status_code=403)
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = _CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        if token is not None and request.query_params.get("token") == token:
            response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
        return response

    def page() -> HTMLResponse:
        if "index.html" not in cache:
            cache["index.html"] = asset("index.html")
        return HTMLResponse(cache["index.html"])

    app.get("/", include_in_schema=False)(page)

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        if name not in _ASSETS:  # a fixed list: no path from a request reaches the disk
            raise HTTPException(404, "not found")
        if name not in cache:
            cache[name] = asset(name)
        return Response(cache[name], media_type=_ASSETS[name])

    def get_run(run_id: str) -> Run:
        run = registry.get(run_id)
        if run is None:
            raise HTTPException(404, f"no run {run_id!r}")
        return run

    def finish_index(run: Run) -> None:
        """Index the rest of a large file after a first page was served from its start."""
        with bg_lock:
            if run.run_id in background:
                return
            background.add(run.run_id)

        def work() -> None:
            try:
                run.index.scan()
            finally:
                with bg_lock:
                    background.discard(run.run_id)

        threading.Thread(target=work, name=f"vf-view-index-{run.run_id}", daemon=True).start()

    @app.get("/api/runs")
    def list_runs() -> JSONResponse:
        runs = []
        for run in registry.refresh():
            runs.append(run.summary(budget_s=STATS_BUDGET_S))
            if not run.index.at_eof:
                finish_index(run)
        return JSONResponse(json_safe({"runs": runs}))

    @app.get("/api/runs/{run_id}")
    def run_detail(run_id: str) -> JSONResponse:
        run = get_run(run_id)
        body = run.detail(budget_s=STATS_BUDGET_S)
        if not run.index.at_eof:
            finish_index(run)
        return JSONResponse(json_safe(body))

    @app.get("/api/runs/{run_id}/rows")
    def rows(
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
        run = get_run(run_id)
        f = RowFilter(sort, q, error, stop_reason, example_id, min_reward, max_reward, metric,
                      min_metric, max_metric)
        if f.is_plain:
            run.index.scan(min_rows=offset + limit)
            if not run.index.at_eof:
                finish_index(run)
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
                page_rows = run.index.read(positions[offset:offset + limit], generation)
                break
            except (StaleIndexError, ValueError):  # the file was replaced under us: start over
                if attempt == 2:
                    raise HTTPException(503, "results file changing too fast; retry") from None
                run.index.scan()
        return JSONResponse(json_safe({
            "total": len(positions), "num_rows": len(run.index), "complete": run.index.at_eof,
            "status": run.status(run.metadata()),
            "offset": offset, "limit": limit, "rows": [row_summary(r) for r in page_rows],
        }))

    @app.get("/api/runs/{run_id}/rows/{example_id}/{rollout_index}")
    def row_detail(run_id: str, example_id: str, rollout_index: int) -> JSONResponse:
        run = get_run(run_id)
        run.index.scan()
        cols = run.index.cols
        same_example = run.index.positions_of(example_id)
        matches = [i for i in same_example if cols.rollout_index[i] == rollout_index]
        if not matches:
            raise HTTPException(404, f"no rollout {rollout_index} of example {example_id!r} in run {run_id!r}")
        try:
            row = run.index.read(matches[-1:])[0]
        except StaleIndexError:
            raise HTTPException(503, "results file being rewritten; retry") from None
        tokens = strip_token_ids(row)
        siblings = sorted(cols.rollout_index[i] for i in same_example)
        return JSONResponse(json_safe({"run_id": run.run_id, "row": row, "token_counts": tokens,
                                       "rollout_indices": siblings}))

    @app.get("/api/compare")
    def compare(runs: Annotated[list[str], Query(min_length=2, max_length=8)],
                limit: Annotated[int, Query(ge=1, le=5000)] = 200) -> JSONResponse:
        chosen = [get_run(r) for r in runs]
        envs = {r.metadata().get("env_id") for r in chosen}
        if len(envs) > 1:
            raise HTTPException(422, f"compare needs runs of one environment, got {sorted(map(str, envs))}")
        for r in chosen:
            r.index.scan()
        try:
            scores = [example_scores(r.index) for r in chosen]
        except StaleIndexError:
            raise HTTPException(503, "results file being rewritten; retry") from None
        labels = run_labels([run_facts(r.metadata()) for r in chosen])
        # Each run against the first, paired over shared examples (vf.compare_runs' figures);
        # runs holding other inputs under the same ids get no paired figures, only the reason.
        paired, paired_error = [], None
        try:
            paired = [compare_scores(scores[0], s, (labels[0], labels[i + 1])).to_dict()
                      for i, s in enumerate(scores[1:])]
        except ExamplesMismatchError as exc:
            paired_error = str(exc)
        examples = compare_examples(scores)
        runs_out = [{**r.summary(), "label": label} for r, label in zip(chosen, labels, strict=True)]
        return JSONResponse(json_safe({
            "runs": runs_out, "num_examples": len(examples), "paired": paired, "paired_error": paired_error,
            "examples": examples[:limit], "diff": "last - first" if len(chosen) == 2 else "max - min",
        }))

    return app
