"""Direct dispatch of the per-rollout routes, ahead of FastAPI's whole middleware stack.

Every rollout costs one ``POST /rollout`` and one ``GET /rollout/{id}/result``, or its share of
one ``POST /rollouts`` (admissions that arrive together, results streamed back); on a small
machine the layers between uvicorn and those endpoints (error, telemetry and body-limit
middleware, exception handlers, router scan) were a large share of the server's CPU. The
:class:`RolloutApp` answers a hot request itself when it is plainly well-formed (authorised,
a declared body within the limit); anything else, other methods and paths included, goes
down the normal stack, whose middleware gives the 401/413/400 answers. An unexpected error
answers a retryable 503 here too, never a 500.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from verifiers_lite._util.extras import missing_server_dependency

try:
    from fastapi import FastAPI
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise missing_server_dependency(exc) from exc

log = logging.getLogger(__name__)

Endpoint = Callable[[Request], Awaitable[Response]]

_PREFIX = "/rollout/"
_SUFFIX = "/result"


class HotRoutes:
    """Serves ``POST /rollout`` and ``GET /rollout/{id}/result`` with the given ASGI apps, and
    ``POST /rollouts`` with the given endpoint.

    ``authorization``: the exact ``Authorization`` header value required (None: no auth).
    """

    def __init__(
        self,
        admission: ASGIApp,
        result: ASGIApp,
        batch_admission: Endpoint,
        *,
        authorization: bytes | None,
        max_body_bytes: int,
    ) -> None:
        self._admission = admission
        self._result = result
        self._batch_admission = request_app(batch_admission)
        self._authorization = authorization
        self._max_body = max_body_bytes

    def _match(self, scope: Scope) -> ASGIApp | None:
        if scope.get("root_path"):
            return None
        path: str = scope["path"]
        method: str = scope["method"]
        if method == "POST" and path == "/rollout":
            return self._admission
        if method == "POST" and path == "/rollouts":
            return self._batch_admission
        if method == "GET" and path.startswith(_PREFIX) and path.endswith(_SUFFIX):
            rollout_id = path[len(_PREFIX) : -len(_SUFFIX)]
            if rollout_id and "/" not in rollout_id:  # the router's {rollout_id} segment
                scope["path_params"] = {"rollout_id": rollout_id}
                return self._result
        return None

    def _plain(self, scope: Scope) -> bool:
        """Authorised, not chunked, and any declared body within the limit."""
        given = b""
        for name, value in scope["headers"]:
            if name == b"authorization":
                given = value
            elif name == b"content-length":
                if not value.isdigit() or int(value) > self._max_body:
                    return False
            elif name == b"transfer-encoding":
                return False
        # Constant-time, as in the auth middleware: the key must not leak through timing.
        return self._authorization is None or hmac.compare_digest(given, self._authorization)

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> bool:
        """Answer ``scope`` if it is a plain hot request; False leaves it to the full stack."""
        app = self._match(scope)
        if app is None or not self._plain(scope):
            return False
        try:
            await app(scope, receive, send)
        except Exception as exc:  # a bug or a race with shutdown must stay retryable
            log.exception("unhandled error on %s %s", scope["method"], scope["path"])
            # If the answer had started, uvicorn refuses this one and closes the connection.
            with contextlib.suppress(RuntimeError):
                await unavailable(exc)(scope, receive, send)
        return True


def request_app(endpoint: Endpoint) -> ASGIApp:
    """``endpoint`` (Request in, Response out) as an ASGI app."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        response = await endpoint(Request(scope, receive))
        await response(scope, receive, send)

    return app


def unavailable(exc: Exception) -> JSONResponse:
    """The answer to an unexpected error: a retryable 503, never a bare 500."""
    return JSONResponse(
        {"detail": f"temporarily unavailable: {type(exc).__name__}"},
        status_code=503,
        headers={"Retry-After": "1"},
    )


class RolloutApp(FastAPI):
    """The rollout server's FastAPI app, with :class:`HotRoutes` in front of its stack."""

    hot_routes: HotRoutes | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        hot = self.hot_routes
        if scope["type"] == "http" and hot is not None and await hot.serve(scope, receive, send):
            return
        await super().__call__(scope, receive, send)
