"""``POST /rollout`` as a plain Starlette endpoint: one admission per rollout, so it is hot.

FastAPI's dependency solving around one pydantic body cost more than the validation itself.
This endpoint reads the body the way FastAPI does (JSON for a missing, ``application/json`` or
``+json`` content type, bytes otherwise) and validates it with the same ``RolloutRequest``
model, so the 422 details (``loc`` under ``body``, ``msg``, ``type``) are the ones FastAPI gave.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .registry import DuplicateRolloutError, RegistryClosedError
from .service import BackendFullError, RolloutService
from .types import RolloutRequest, RolloutStatus

_RETRY_LATER = {"Retry-After": "1"}
_QUEUED = RolloutStatus.QUEUED.value


def _invalid(errors: list[dict[str, Any]]) -> JSONResponse:
    # Echoing the input back can fail (NaN/inf are not JSON): report location and reason only.
    detail = [
        {"loc": ["body", *e.get("loc", ())], "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
        for e in errors
    ]
    return JSONResponse({"detail": detail}, status_code=422)


def _error(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


def _wants_json(content_type: str | None) -> bool:
    if not content_type:
        return True
    mime = content_type.split(";", 1)[0].strip().lower()
    kind, _, subtype = mime.partition("/")
    return kind == "application" and (subtype == "json" or subtype.endswith("+json"))


def make_admission_endpoint(
    service: RolloutService, wait_sec: float, lease_sec: float
) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint bound to ``service``: 202 with the polling lease, or 409/422/429/503."""

    async def submit(request: Request) -> Response:
        raw = await request.body()
        if not raw:
            return _invalid([{"loc": (), "msg": "Field required", "type": "missing"}])
        data: Any = raw
        if _wants_json(request.headers.get("content-type")):
            try:
                data = json.loads(raw)  # like FastAPI: Python's parser (NaN reaches the validators)
            except json.JSONDecodeError as exc:
                return _invalid([{"loc": (exc.pos,), "msg": "JSON decode error", "type": "json_invalid"}])
            except ValueError:  # not UTF-8/16/32
                return _error(400, "There was an error parsing the body")
        try:
            body = RolloutRequest.model_validate(data)
        except ValidationError as exc:
            return _invalid([dict(e) for e in exc.errors(include_url=False, include_input=False)])
        try:
            record = service.admit(body)
        except DuplicateRolloutError:
            return _error(409, f"rollout_id {body.rollout_id!r} is live or still retained")
        except BackendFullError as exc:
            retry = f"{exc.retry_after_sec:.3f}".rstrip("0").rstrip(".")
            return _error(429, "backend is full", {"Retry-After": retry})
        except RegistryClosedError:
            return _error(503, "server is shutting down", _RETRY_LATER)
        accepted = {
            "rollout_id": record.rollout_id,
            "status": _QUEUED,
            "polling_lease_token": record.lease_token,
            "result_wait_timeout_sec": wait_sec,
            "polling_lease_timeout_sec": lease_sec,
        }
        return JSONResponse(accepted, status_code=202)

    return submit
