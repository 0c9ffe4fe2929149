"""The interception endpoint: an OpenAI-compatible server on 127.0.0.1 that programs call.

One server per run (FastAPI under uvicorn, on the run's own event loop, a random port) serves
every rollout of that run, each through its own bearer token (``OPENAI_API_KEY`` of the
program): a call without a known token is refused with 401, and a token reaches only its own
rollout. Each call goes to the run's model client and is captured on the rollout
(:mod:`.session`). Routes: ``POST /v1/chat/completions`` and ``POST /v1/responses``, each
answered whole or, when the request asks ``stream``, as server-sent events (the whole turn,
written once the model has answered); ``GET /v1/models``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

from verifiers_lite._util.extras import require
from verifiers_lite._util.scopes import ResourceScope, current_rollout_scope, current_run_scope
from verifiers_lite.clients.openai_wire import (
    chat_completion_body,
    chat_completion_chunks,
    dumps,
    responses_body,
    responses_events,
    responses_request,
    sse,
)
from verifiers_lite.core.model_client import ChatResponse
from verifiers_lite.programs.session import CallRefused, RolloutSession

__all__ = ["InterceptionServer", "interception_server"]


class InterceptionServer:
    """The endpoint and the sessions it routes to; :meth:`start` it, :meth:`close` it."""

    def __init__(self) -> None:
        self.sessions: dict[str, RolloutSession] = {}
        self.port = 0
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None

    @property
    def base_url(self) -> str:
        """What a program's ``OPENAI_BASE_URL`` is set to."""
        return f"http://127.0.0.1:{self.port}/v1"

    def add(self, session: RolloutSession) -> None:
        self.sessions[session.token] = session

    def remove(self, session: RolloutSession) -> None:
        self.sessions.pop(session.token, None)

    async def start(self) -> InterceptionServer:
        """Listen on a free loopback port (bound here, so no other process can take it)."""
        uvicorn = require("uvicorn", "a program environment's interception endpoint", "server")

        class _Server(uvicorn.Server):  # type: ignore[misc,name-defined]
            # The driver's Ctrl-C belongs to the driver: uvicorn must not take it.
            def capture_signals(self) -> Any:
                return contextlib.nullcontext()

            def install_signal_handlers(self) -> None:
                return None

        # IPPROTO_TCP named: asyncio turns Nagle off (TCP_NODELAY) only on sockets that say so,
        # and an answer written in two parts would otherwise wait ~40 ms for a delayed ACK.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            build_app(self),
            log_level="warning",
            access_log=False,
            lifespan="off",
            log_config=None,  # the driver's logging stays as the user set it
            backlog=4096,
            timeout_keep_alive=60,
            proxy_headers=False,
        )
        self._server = _Server(config)
        self._task = asyncio.ensure_future(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises the reason it could not start
            await asyncio.sleep(0.005)
        return self

    async def close(self) -> None:
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(asyncio.shield(self._task), 5.0)
        if not self._task.done():
            self._task.cancel()


_SERVERS: dict[int, asyncio.Future[InterceptionServer]] = {}


async def interception_server() -> InterceptionServer:
    """The current run's endpoint, started on first use and closed when the run ends (outside a
    run: the current rollout's)."""
    scope: ResourceScope | None = current_run_scope() or current_rollout_scope()
    if scope is None:
        raise RuntimeError("a program rollout runs inside a run or a rollout attempt")
    key = id(scope)
    future = _SERVERS.get(key)
    if future is None:
        future = asyncio.get_running_loop().create_future()
        _SERVERS[key] = future
        try:
            server = await InterceptionServer().start()
        except BaseException as exc:
            del _SERVERS[key]
            future.set_exception(exc)
            future.exception()  # retrieved: the caller raises it
            raise

        async def close() -> None:
            _SERVERS.pop(key, None)
            await server.close()

        scope.add(close)
        future.set_result(server)
    return await asyncio.shield(future)


def _error(status: int, code: str, message: str, after: Callable[[], None] | None = None) -> Any:
    from starlette.background import BackgroundTask
    from starlette.responses import Response

    kind = "authentication_error" if status == 401 else "invalid_request_error"
    body = dumps({"error": {"message": message, "type": kind, "param": None, "code": code}})
    return Response(
        body,
        status_code=status,
        media_type="application/json",
        background=BackgroundTask(after) if after is not None else None,
    )


def _bearer(header: str | None) -> str:
    if not header or not header.lower().startswith("bearer "):
        return ""
    return header[7:].strip()


def build_app(server: InterceptionServer) -> Any:
    """The FastAPI app of ``server`` (plain routes: the body is read as it came, unvalidated)."""
    fastapi = require("fastapi", "a program environment's interception endpoint", "server")
    app = fastapi.FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    async def chat(request: Any) -> Any:
        return await _handle(server, request, _chat_answer)

    async def responses(request: Any) -> Any:
        return await _handle(server, request, _responses_answer)

    async def models(request: Any) -> Any:
        from starlette.responses import JSONResponse

        session = server.sessions.get(_bearer(request.headers.get("authorization")))
        if session is None:
            return _error(401, "invalid_api_key", "no rollout has this API key")
        data = [
            {"id": session.model, "object": "model", "created": 0, "owned_by": "verifiers_lite"}
        ]
        return JSONResponse({"object": "list", "data": data})

    app.add_route("/v1/chat/completions", chat, methods=["POST"])
    app.add_route("/v1/responses", responses, methods=["POST"])
    app.add_route("/v1/models", models, methods=["GET"])
    return app


Answer = Callable[[RolloutSession, dict[str, Any]], Any]


async def _handle(server: InterceptionServer, request: Any, answer: Answer) -> Any:
    session = server.sessions.get(_bearer(request.headers.get("authorization")))
    if session is None:
        return _error(401, "invalid_api_key", "no rollout has this API key")
    try:
        body = json.loads(await request.body())
        if not isinstance(body, dict):
            raise ValueError("the body must be a JSON object")
        return await answer(session, body)
    except CallRefused as exc:
        stop = exc.stop
        return _error(
            exc.status, exc.code, exc.message, (lambda: session.end(stop)) if stop else None
        )
    except (ValueError, TypeError, KeyError) as exc:
        return _error(400, "bad_request", f"bad request: {exc}")


def _reply(data: bytes, stream: bool) -> Any:
    from starlette.responses import Response

    return Response(data, media_type="text/event-stream" if stream else "application/json")


def _ids() -> tuple[str, int]:
    return f"chatcmpl-{secrets.token_hex(12)}", int(time.time())


async def _chat_answer(session: RolloutSession, body: dict[str, Any]) -> Any:
    messages = body["messages"]
    if not isinstance(messages, list) or not messages:
        raise ValueError("'messages' must be a non-empty list")
    if int(body.get("n") or 1) != 1:
        raise ValueError("n must be 1: one answer per call")
    stream = bool(body.get("stream"))
    meta = {"dialect": "chat", "stream": stream, "program_model": body.get("model")}
    response = await session.call(messages, body.get("tools") or None, body, meta)
    rid, created = _ids()
    if stream:
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks = chat_completion_chunks(response, session.model, rid, created, include_usage=usage)
        return _reply(sse(chunks, done=True), True)
    return _reply(dumps(chat_completion_body(response, session.model, rid, created)), False)


async def _responses_answer(session: RolloutSession, body: dict[str, Any]) -> Any:
    parsed = responses_request(body)
    meta = {"dialect": "responses", "stream": parsed.stream, "program_model": parsed.model}
    response: ChatResponse = await session.call(
        parsed.messages, parsed.tools, parsed.sampling_args, meta
    )
    rid, created = _ids()
    if parsed.stream:
        events: Iterator[dict[str, Any]] = responses_events(response, session.model, rid, created)
        return _reply(sse(events, named=True), True)
    return _reply(dumps(responses_body(response, session.model, rid, created)), False)
