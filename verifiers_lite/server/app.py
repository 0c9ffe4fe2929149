"""``create_rollout_server``: the FastAPI app in front of a :class:`RolloutBackend`."""

from __future__ import annotations

import asyncio
import logging
import math
import os
import signal
import threading
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from verifiers_lite._util.clock import Clock
from verifiers_lite._util.extras import missing_server_dependency
from verifiers_lite.server.protocol import (
    DEFAULT_POLLING_LEASE_TIMEOUT_SEC,
    DEFAULT_RESULT_RETENTION_SEC,
    DEFAULT_RESULT_WAIT_TIMEOUT_SEC,
)

from .admission_route import AdmissionEndpoint, make_batch_endpoint
from .auth import BearerAuthMiddleware, bearer_value, check_api_key
from .backend import RolloutBackend
from .bodies import DEFAULT_MAX_BODY_BYTES, BodyLimitMiddleware
from .cancel_route import make_cancel_endpoint
from .hot_routes import HotRoutes, RolloutApp, unavailable
from .lifecycle import Lifecycle, ShutdownTimeouts
from .result_route import ResultEndpoint, make_batch_result_endpoint
from .service import RolloutService

try:
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from starlette.routing import Route
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise missing_server_dependency(exc) from exc

log = logging.getLogger(__name__)

#: New in every server process, so a client can tell that the server restarted.
PROCESS_ID = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
#: Set by whoever launches the server, so it can tell its own server from another on the port.
INSTANCE_ID_ENV = "VF_LITE_INSTANCE_ID"


def _positive(name: str, value: float) -> float:
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be finite and positive, got {value!r}")
    return float(value)


def _non_negative(name: str, value: float) -> float:
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be finite and 0 or more, got {value!r}")
    return float(value)


def resolve_instance_id(instance_id: str | None) -> str:
    """The given id, else ``$VF_LITE_INSTANCE_ID``, else this process's ``PROCESS_ID``."""
    source = "instance_id"
    if instance_id is None:
        instance_id, source = os.environ.get(INSTANCE_ID_ENV), INSTANCE_ID_ENV
    if instance_id is None:
        return PROCESS_ID
    if not instance_id.strip() or len(instance_id) > 256 or not instance_id.isprintable():
        raise ValueError(f"{source} must be 1-256 printable characters, got {instance_id!r}")
    return instance_id


@dataclass(frozen=True)
class ServerSettings:
    """The checked settings of one rollout server."""

    api_key: str | None
    wait_sec: float
    lease_sec: float
    retention_sec: float
    max_body_bytes: int
    instance_id: str


def create_rollout_server(
    backend: RolloutBackend,
    api_key: str | None = None,
    result_wait_timeout_sec: float = DEFAULT_RESULT_WAIT_TIMEOUT_SEC,
    polling_lease_timeout_sec: float = DEFAULT_POLLING_LEASE_TIMEOUT_SEC,
    result_retention_sec: float = DEFAULT_RESULT_RETENTION_SEC,
    *,
    shutdown_timeouts: ShutdownTimeouts | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    instance_id: str | None = None,
    clock: Clock | None = None,
) -> Any:
    """Build the rollout server ASGI app; run it with uvicorn (see :func:`run_rollout_server`).

    ``result_retention_sec`` may be 0: a finished rollout is then forgotten at the next sweep
    (within a second), and only polls already waiting receive its result. ``max_body_bytes``
    bounds every request body (413 above it). ``instance_id`` (default ``$VF_LITE_INSTANCE_ID``,
    else the process id) is reported by ``/health`` for launchers that name their servers.
    ``clock`` (default the system's) times leases, retention and the lease sweeper.
    """
    settings = _checked_settings(
        api_key,
        result_wait_timeout_sec,
        polling_lease_timeout_sec,
        result_retention_sec,
        max_body_bytes,
        instance_id,
    )
    service = RolloutService(
        backend,
        polling_lease_timeout_sec=settings.lease_sec,
        result_retention_sec=settings.retention_sec,
        clock=clock,
    )
    app = _app_with_lifecycle(service, Lifecycle(service, shutdown_timeouts or ShutdownTimeouts()))
    _add_error_answers(app)
    _add_rollout_routes(app, service, settings)
    _add_health_route(app, backend, service, settings.instance_id)
    _add_middleware(app, settings)
    return app


def _checked_settings(
    api_key: str | None,
    wait: float,
    lease: float,
    retention: float,
    max_body_bytes: int,
    instance_id: str | None,
) -> ServerSettings:
    """The settings, each checked with an error naming it (before anything is built)."""
    api_key = check_api_key(api_key)
    wait_sec = _positive("result_wait_timeout_sec", wait)
    lease_sec = _positive("polling_lease_timeout_sec", lease)
    retention_sec = _non_negative("result_retention_sec", retention)
    if wait_sec >= lease_sec:
        raise ValueError("result_wait_timeout_sec must be shorter than polling_lease_timeout_sec")
    if (
        isinstance(max_body_bytes, bool)
        or not isinstance(max_body_bytes, int)
        or max_body_bytes < 1
    ):
        raise ValueError(f"max_body_bytes must be a positive int, got {max_body_bytes!r}")
    return ServerSettings(
        api_key,
        wait_sec,
        lease_sec,
        retention_sec,
        max_body_bytes,
        resolve_instance_id(instance_id),
    )


def _app_with_lifecycle(service: RolloutService, lifecycle: Lifecycle) -> RolloutApp:
    """The app, whose lifespan drains the service at shutdown."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if not getattr(app.state, "managed_shutdown", False):
            _chain_signal_wakeup(service)
        yield
        await lifecycle.shutdown()

    app = RolloutApp(title="verifiers_lite rollout server", lifespan=lifespan)
    app.state.rollout_service = service
    app.state.rollout_lifecycle = lifecycle
    return app


def _add_error_answers(app: RolloutApp) -> None:
    """422 without the input echoed; any unexpected error a retryable 503."""

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        # Echoing the input back can fail (NaN/inf are not JSON): report location and reason only.
        errors = [
            {
                "loc": list(e.get("loc", ())),
                "msg": str(e.get("msg", "")),
                "type": str(e.get("type", "")),
            }
            for e in exc.errors()
        ]
        return JSONResponse({"detail": errors}, status_code=422)

    @app.exception_handler(Exception)
    async def _never_500(request: Request, exc: Exception) -> JSONResponse:
        # A bug or a race with shutdown must stay retryable for the client, never a bare 500.
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return unavailable(exc)


def _add_rollout_routes(app: RolloutApp, service: RolloutService, settings: ServerSettings) -> None:
    """Admission, result polls and cancellation, single and batched."""
    wait_sec, lease_sec = settings.wait_sec, settings.lease_sec
    # The per-rollout routes (raw ASGI apps) and the batched admission are plain endpoints that
    # HotRoutes serves ahead of FastAPI's whole stack when a request is plainly well-formed;
    # the router entries answer the rest (401/413 from the middleware, 405s) as before.
    submit = AdmissionEndpoint(service, wait_sec, lease_sec)
    result = ResultEndpoint(service, wait_sec)
    # ASGI apps, not functions: the route calls them as they are.
    app.router.routes.append(Route("/rollout", submit, methods=["POST"]))
    app.router.routes.append(Route("/rollout/{rollout_id}/result", result, methods=["GET"]))
    app.router.add_route("/rollout/cancel", make_cancel_endpoint(service), methods=["POST"])
    # Many admissions in one request (a burst, a group): one round trip instead of one each.
    submit_many = make_batch_endpoint(service, wait_sec, lease_sec)
    app.router.add_route("/rollouts", submit_many, methods=["POST"])
    app.router.add_route(
        "/rollouts/results", make_batch_result_endpoint(service, wait_sec), methods=["POST"]
    )
    app.hot_routes = HotRoutes(
        submit,
        result,
        submit_many,
        authorization=None if settings.api_key is None else bearer_value(settings.api_key),
        max_body_bytes=settings.max_body_bytes,
    )


def _add_health_route(
    app: RolloutApp, backend: RolloutBackend, service: RolloutService, instance_id: str
) -> None:
    @app.get("/health")
    async def health() -> dict[str, Any]:
        payload = dict(backend.health())
        payload.update(
            instance_id=instance_id,
            process_id=PROCESS_ID,
            lifecycle=service.lifecycle(),
            held_polls=service.registry.held_polls,
        )
        return payload


def _add_middleware(app: RolloutApp, settings: ServerSettings) -> None:
    """The body limit on every route, inside the bearer check (401 before 413, 404 or 422)."""
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    if settings.api_key is not None:
        # Added last, so outermost: 401 comes before routing (any 404 or 422).
        app.add_middleware(BearerAuthMiddleware, api_key=settings.api_key)


def _chain_signal_wakeup(service: RolloutService) -> None:
    """Under plain uvicorn, wake idle long polls at SIGTERM instead of holding exit up to 30 s."""
    if threading.current_thread() is not threading.main_thread():
        return
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(sig)

        def handler(signum: int, frame: Any, previous: Any = previous) -> None:
            service.accepting = False
            loop.call_soon_threadsafe(service.registry.close)
            if callable(previous):
                previous(signum, frame)

        signal.signal(sig, handler)
