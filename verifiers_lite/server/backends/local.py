"""``LocalBackend``: run an Environment's rollouts and grading inside the server process."""

from __future__ import annotations

import asyncio
import json
import math
import time
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python

from verifiers_lite._util.scopes import run_scope
from verifiers_lite.server.backend import RolloutContext
from verifiers_lite.server.errors import RolloutFailure
from verifiers_lite.server.protocol import RolloutRequest, WireErrorCategory


class LocalBackend:
    """Runs the environment's rollouts in-process, at most ``max_concurrent`` at a time.

    Admission takes up to ``max_concurrent + max_queued`` rollouts (queued ones wait for a slot;
    ``max_queued`` defaults to ``max_concurrent``), then answers 429 with ``retry_after_sec``.
    The request's ``metadata`` carries ``model`` (else ``model`` given here, else the one model
    the request's ``chat_completions_url`` lists at ``GET /models``), ``sampling_args``,
    ``example_id``, ``info`` and ``task`` (or the whole rollout ``input``), and
    ``return_state``; ``label`` is the answer; ``extra_fields`` is ``info["extra_fields"]``. A
    rollout is graded (when asked), then the
    rubric's cleanup runs once. With ``artifacts_dir`` each finished row, trajectory included,
    is written to ``<artifacts_dir>/<rollout_id>.json`` before the rollout stops counting as
    active.
    """

    def __init__(
        self,
        env: Any,
        max_concurrent: int = 32,
        artifacts_dir: str | Path | None = None,
        *,
        max_queued: int | None = None,
        model: str | None = None,
        retry_after_sec: float = 0.25,
    ) -> None:
        if max_concurrent < 1:
            raise ValueError("max_concurrent must be at least 1")
        if max_queued is not None and max_queued < 0:
            raise ValueError("max_queued must be 0 or more")
        if not math.isfinite(retry_after_sec) or retry_after_sec <= 0:
            raise ValueError("retry_after_sec must be finite and positive")
        self.env = env
        self.max_concurrent = max_concurrent
        self.max_admitted: int | None = max_concurrent + (
            max_concurrent if max_queued is None else max_queued
        )
        self.retry_after_sec = retry_after_sec
        self.model = model
        self.artifacts_dir = Path(artifacts_dir) if artifacts_dir is not None else None
        if self.artifacts_dir is not None:
            self.artifacts_dir.mkdir(parents=True, exist_ok=True)
        self._sem = asyncio.Semaphore(max_concurrent)
        self._clients: dict[tuple[str, str | None], Any] = {}
        self._running: dict[str, asyncio.Task[Any]] = {}
        self._models: dict[tuple[str, str | None], str] = {}
        self._scope = run_scope()  # what the rollouts start for the run (shared tool servers)
        self.completed = 0

    def _client(self, url: str, api_key: str | None) -> Any:
        # One client per endpoint: its connection pool is reused across rollouts.
        from verifiers_lite.clients import ChatClient

        key = (url, api_key)
        if key not in self._clients:
            self._clients[key] = ChatClient(base_url=url, api_key=api_key)
        return self._clients[key]

    def _check_grading(self, request: RolloutRequest) -> None:
        rubric = getattr(self.env, "rubric", None)
        if not getattr(rubric, "funcs", None):
            raise RolloutFailure(
                WireErrorCategory.VALIDATION_ERROR,
                f"grading requested but {type(self.env).__name__} has no grader (its rubric has "
                "no reward functions); send grade=false",
            )
        if request.label is None and not request.metadata:
            raise RolloutFailure(
                WireErrorCategory.VALIDATION_ERROR,
                "grading requested but the request has neither a label nor metadata",
            )

    async def execute(self, request: RolloutRequest, ctx: RolloutContext) -> dict[str, Any]:
        """Queue for a slot, run the rollout, grade it, clean up, persist artifacts; return the row.

        ``agent_timeout_sec`` and ``grader_timeout_sec`` bound their own stage: time spent
        queued for a slot counts toward neither (the polling lease bounds a forgotten rollout).
        With ``metadata.return_state`` (and ``grade=false``) the result is the rollout's whole
        State, unscored and not cleaned up: the caller scores it and runs the rubric's cleanup.
        """
        meta = dict(request.metadata or {})
        return_state = bool(meta.get("return_state"))
        if return_state and request.grade:
            raise RolloutFailure(
                WireErrorCategory.VALIDATION_ERROR,
                "metadata.return_state asks for the unscored state, which the caller grades: "
                "send grade=false with it",
            )
        if request.grade:
            self._check_grading(request)
        rollout_input = _rollout_input(request, meta)
        async with self._sem:
            if ctx.cancel_requested.is_set():
                raise asyncio.CancelledError()  # cancelled while queued: the slot runs nothing
            ctx.set_status("running")
            model = meta.get("model") or self.model or await self._served_model(request)
            client = self._client(request.chat_completions_url, request.llm_api_key)
            started = time.perf_counter()
            # The server's lifetime is the run: shared tool servers live until shutdown.
            token = self._scope.enter()
            try:
                task = asyncio.ensure_future(
                    self.env.rollout_state(rollout_input, client, model, meta.get("sampling_args"))
                )
            finally:
                self._scope.leave(token)
            self._running[request.rollout_id] = task
            try:
                state = await asyncio.wait_for(task, request.agent_timeout_sec)
            except TimeoutError as exc:
                raise RolloutFailure(
                    WireErrorCategory.TIMEOUT,
                    f"agent did not finish within {request.agent_timeout_sec}s",
                ) from exc
            finally:
                self._running.pop(request.rollout_id, None)
            if return_state:
                if ctx.cancel_requested.is_set():
                    await self.env.finish_group([state], score=False)  # nobody will clean it up
                    raise asyncio.CancelledError()
                # Whatever the environment put on its state must cross as JSON.
                row: dict[str, Any] = to_jsonable_python(state, fallback=repr)
            else:
                row = await self._grade_and_clean(state, request, ctx, started)
            if self.artifacts_dir is not None:
                await asyncio.to_thread(self._persist, request.rollout_id, row)
        self.completed += 1
        return row

    async def _served_model(self, request: RolloutRequest) -> str:
        """The model the request's endpoint serves (``GET {url}/models``), once per endpoint."""
        key = (request.chat_completions_url, request.llm_api_key)
        if key not in self._models:
            self._models[key] = await discover_model(*key)
        return self._models[key]

    async def _grade_and_clean(
        self, state: dict[str, Any], request: RolloutRequest, ctx: RolloutContext, started: float
    ) -> dict[str, Any]:
        """Grade (when asked), then the rubric's cleanup exactly once, then the row."""
        timed_out: TimeoutError | None = None
        if request.grade and not state.get("error") and not ctx.cancel_requested.is_set():
            ctx.set_status("grading")
            try:
                await asyncio.wait_for(
                    self.env.rubric.score_rollout(state), request.grader_timeout_sec
                )
            except TimeoutError as exc:
                timed_out = exc
                state["reward"] = state["advantage"] = None  # the rollout stays, ungraded
        row = (await self.env.finish_group([state], score=False, started=started))[0]
        if ctx.cancel_requested.is_set():
            raise asyncio.CancelledError()
        if state.get("remove_sample"):
            row["remove_sample"] = True  # a reward function asked to drop this sample
        if timed_out is not None:
            raise RolloutFailure(
                WireErrorCategory.TIMEOUT,
                f"grader did not finish within {request.grader_timeout_sec}s",
                sample=row,
            ) from timed_out
        return row

    def _persist(self, rollout_id: str, row: dict[str, Any]) -> None:
        assert self.artifacts_dir is not None
        path = self.artifacts_dir / f"{rollout_id}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(row, default=str))
        tmp.replace(path)  # atomic: a reader never sees half a file

    async def cancel(self, rollout_id: str) -> None:
        task = self._running.get(rollout_id)
        if task is not None:
            task.cancel()

    def health(self) -> dict[str, Any]:
        """Backend fields of ``GET /health``."""
        return {
            "backend": "local",
            "environment": type(self.env).__name__,
            "max_concurrent": self.max_concurrent,
            "running": len(self._running),
            "completed": self.completed,
        }

    async def shutdown(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()
        await self._scope.aclose()


async def discover_model(base_url: str, api_key: str | None, timeout: float = 10.0) -> str:
    """The one model an OpenAI-compatible endpoint lists (vLLM and llama.cpp serve one); an
    endpoint listing several is a ``validation_error`` naming them."""
    import aiohttp

    from verifiers_lite.clients.models import list_models, only_model

    url = base_url.rstrip("/") + "/models"
    try:
        models = await list_models(base_url, api_key, timeout)
    except (
        aiohttp.ClientError,
        TimeoutError,
        ValueError,
        LookupError,
        TypeError,
        AttributeError,
    ) as exc:
        raise RolloutFailure(
            WireErrorCategory.VALIDATION_ERROR,
            f"no model: the request's metadata has no 'model', the server has no default model "
            f"(vf-lite serve --model) and {url} did not name one ({type(exc).__name__}: {exc})",
        ) from exc
    try:
        return only_model(
            models,
            base_url.rstrip("/"),
            "name the model in the request's metadata ('model') or start the server with --model",
        )
    except ValueError as exc:
        raise RolloutFailure(WireErrorCategory.VALIDATION_ERROR, f"no model: {exc}") from exc


def _rollout_input(request: RolloutRequest, meta: dict[str, Any]) -> dict[str, Any]:
    """The Environment input: ``metadata.input`` as sent (every dataset column kept), else
    built from the request's messages, label and metadata fields. The request's
    ``extra_fields`` (when not null) go in ``info["extra_fields"]``."""
    given = meta.get("input")
    if isinstance(given, dict):
        built = {**given, "prompt": request.initial_messages}
    else:
        built = {
            "prompt": request.initial_messages,
            "answer": request.label if request.label is not None else "",
            "info": meta.get("info") or {},
            "task": meta.get("task") or "default",
            "example_id": meta.get("example_id") if meta.get("example_id") is not None else 0,
        }
    if request.extra_fields is not None:
        info = built.get("info") or {}
        if not isinstance(info, dict):
            raise RolloutFailure(
                WireErrorCategory.VALIDATION_ERROR,
                f"extra_fields go in the input's info, which is a {type(info).__name__}, not an object",
            )
        built["info"] = {**info, "extra_fields": request.extra_fields}
    return built
