"""Raw ASGI dispatch of the two per-rollout routes, ahead of FastAPI's middleware and router.

Every rollout costs one ``POST /rollout`` and one ``GET /rollout/{id}/result``; on a small
machine the layers between uvicorn and those endpoints (exception, telemetry and body-limit
middleware, exit stack, router scan) were a large share of the server's CPU. This middleware
sits inside the bearer-auth middleware (401 still comes first) and inside FastAPI's
ServerErrorMiddleware (an unexpected error still answers 503, never 500); anything else,
other methods on these paths included, goes down the normal stack.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

Endpoint = Callable[[Request], Awaitable[Response]]

_PREFIX = "/rollout/"
_SUFFIX = "/result"


class HotRoutes:
    """Serves ``POST /rollout`` and ``GET /rollout/{id}/result`` with the given endpoints."""

    def __init__(self, app: Any, admission: Endpoint, result: Endpoint) -> None:
        self.app = app
        self._admission = admission
        self._result = result

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not scope.get("root_path"):
            path: str = scope["path"]
            method: str = scope["method"]
            if method == "POST" and path == "/rollout":
                response = await self._admission(Request(scope, receive))
                await response(scope, receive, send)
                return
            if method == "GET" and path.startswith(_PREFIX) and path.endswith(_SUFFIX):
                rollout_id = path[len(_PREFIX) : -len(_SUFFIX)]
                if rollout_id and "/" not in rollout_id:  # the router's {rollout_id} segment
                    scope["path_params"] = {"rollout_id": rollout_id}
                    response = await self._result(Request(scope, receive))
                    await response(scope, receive, send)
                    return
        await self.app(scope, receive, send)
