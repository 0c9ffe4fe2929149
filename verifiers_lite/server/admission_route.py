"""``POST /rollout`` as a plain Starlette endpoint: one admission per rollout, so it is hot.

FastAPI's dependency solving around one pydantic body cost more than the validation itself.
This endpoint reads the body the way FastAPI does (see :func:`bodies.read_json`) and validates
it with the same ``RolloutRequest`` model, so the 422 details (``loc`` under ``body``, ``msg``,
``type``) are the ones FastAPI gave.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

from pydantic import ValidationError
from pydantic_core import to_json
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .bodies import error, invalid, read_json
from .rollout_table import DuplicateRolloutError, RegistryClosedError
from .service import BackendFullError, RolloutService
from .types import RolloutRequest, RolloutStatus

_RETRY_LATER = {"Retry-After": "1"}
_QUEUED = RolloutStatus.QUEUED.value


def busy(retry_after_sec: float) -> JSONResponse:
    """The 429 answer: HTTP's Retry-After takes whole seconds, the exact hint goes in the body."""
    whole = max(1, math.ceil(retry_after_sec))
    return JSONResponse(
        {"detail": "backend is full", "retry_after_sec": retry_after_sec},
        status_code=429,
        headers={"Retry-After": str(whole)},
    )


def make_admission_endpoint(
    service: RolloutService, wait_sec: float, lease_sec: float
) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint bound to ``service``: 202 with the polling lease, or 4xx/503."""

    async def submit(request: Request) -> Response:
        data = await read_json(request)
        if isinstance(data, Response):
            return data
        try:
            body = RolloutRequest.model_validate(data)
        except ValidationError as exc:
            return invalid([dict(e) for e in exc.errors(include_url=False, include_input=False)])
        try:
            record = service.admit(body)
        except DuplicateRolloutError:
            return error(409, f"rollout_id {body.rollout_id!r} is live or still retained")
        except BackendFullError as exc:
            return busy(exc.retry_after_sec)
        except RegistryClosedError:
            return error(503, "server is shutting down", _RETRY_LATER)
        accepted = {
            "rollout_id": record.rollout_id,
            "status": _QUEUED,
            "polling_lease_token": record.lease_token,
            "result_wait_timeout_sec": wait_sec,
            "polling_lease_timeout_sec": lease_sec,
        }
        return Response(to_json(accepted), status_code=202, media_type="application/json")

    return submit

