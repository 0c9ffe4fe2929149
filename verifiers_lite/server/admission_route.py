"""``POST /rollout`` (one rollout) and ``POST /rollouts`` (many in one request): admission.

Neither goes through FastAPI: its dependency solving around one pydantic body cost more than
the validation itself (``POST /rollout`` is a raw ASGI app, ``POST /rollouts`` a plain
Starlette endpoint). A body is read the way FastAPI does (see :func:`bodies.parse_json`) and
validated with the same ``RolloutRequest`` model, so the 422 details (``loc`` under ``body``,
``msg``, ``type``) are the ones FastAPI gave. The batch
admits each rollout exactly as ``POST /rollout`` would and answers, in order, what that route
would have answered for it; it exists because a burst of admissions costs one HTTP request
each, which on a small machine is most of the server's work. Either route, asked for
``application/x-ndjson``, streams the admitted rollouts' results on the admission response.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError
from pydantic_core import to_json
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from verifiers_lite.server.protocol import RolloutRequest, RolloutStatus

from .bodies import error, header, invalid_detail, parse_json, read_body, read_json, send_json
from .rollout_table import DuplicateRolloutError, RegistryClosedError, RolloutRecord
from .service import BackendFullError, RolloutService

_RETRY_LATER = {"Retry-After": "1"}
#: The media type a client accepts to get its result on the admission response (see below).
NDJSON = "application/x-ndjson"
_NDJSON = NDJSON.encode()
_QUEUED = RolloutStatus.QUEUED.value
#: Rollouts one ``POST /rollouts`` may carry.
MAX_BATCH = 10_000

Answer = tuple[int, dict[str, Any], dict[str, str] | None]  # status, body, headers


def _busy(retry_after_sec: float) -> Answer:
    whole = max(1, math.ceil(retry_after_sec))
    body = {"detail": "backend is full", "retry_after_sec": retry_after_sec}
    return 429, body, {"Retry-After": str(whole)}


def admit_one(
    service: RolloutService, data: Any, wait_sec: float, lease_sec: float, *loc: str | int
) -> Answer:
    """What ``POST /rollout`` answers for one request body (``loc``: its place in a batch)."""
    try:
        body = RolloutRequest.model_validate(data)
    except ValidationError as exc:
        errors = [dict(e) for e in exc.errors(include_url=False, include_input=False)]
        return 422, {"detail": invalid_detail(errors, *loc)}, None
    try:
        record = service.admit(body)
    except DuplicateRolloutError:
        return 409, {"detail": f"rollout_id {body.rollout_id!r} is live or still retained"}, None
    except BackendFullError as exc:
        return _busy(exc.retry_after_sec)
    except RegistryClosedError:
        return 503, {"detail": "server is shutting down"}, _RETRY_LATER
    accepted = {
        "rollout_id": record.rollout_id,
        "status": _QUEUED,
        "polling_lease_token": record.lease_token,
        "result_wait_timeout_sec": wait_sec,
        "polling_lease_timeout_sec": lease_sec,
    }
    return 202, accepted, None


class AdmissionEndpoint:
    """``POST /rollout`` bound to ``service``, as a raw ASGI app: 202 with the polling lease, or
    4xx/503. A burst of admissions waits on this route's CPU, so the accepted answer is sent as
    the two ASGI messages, without Starlette's Request and Response objects (an ASGI app is
    also what the router's route calls when the request takes the full stack).
    """

    def __init__(self, service: RolloutService, wait_sec: float, lease_sec: float) -> None:
        self._service = service
        self._wait_sec = wait_sec
        self._lease_sec = lease_sec

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = await read_body(receive)
        if raw is None:
            return  # the client left: nobody to answer
        content_type = header(scope, b"content-type")
        data = parse_json(raw, None if content_type is None else content_type.decode("latin-1"))
        if isinstance(data, Response):
            await data(scope, receive, send)
            return
        status, body, headers = admit_one(self._service, data, self._wait_sec, self._lease_sec)
        if status == 202 and _NDJSON in (header(scope, b"accept") or b""):
            await AcceptedThenResult(self._service, body, self._wait_sec)(scope, receive, send)
            return
        extra = (
            None
            if headers is None
            else [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        )
        await send_json(send, status, to_json(body), extra)


class AcceptedThenResult(Response):
    """The 202 of a client that accepts ``application/x-ndjson``: the admission answer as the
    first line at once, then, on the same response, the line ``GET /rollout/{id}/result?wait=
    terminal`` would answer (the terminal result, or the current status once the result wait
    runs out). One request per rollout instead of two; a client that loses the connection after
    the first line has its lease and polls as usual. The lease is renewed as a poll renews it.
    """

    media_type = NDJSON

    def __init__(self, service: RolloutService, accepted: dict[str, Any], wait_sec: float) -> None:
        super().__init__(status_code=202, media_type=NDJSON)
        self._service = service
        self._accepted = accepted
        self._wait_sec = wait_sec

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        registry = self._service.registry
        # No content-length: uvicorn sends the two lines chunked.
        headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]
        await send({"type": "http.response.start", "status": 202, "headers": headers})
        await send(
            {
                "type": "http.response.body",
                "body": to_json(self._accepted) + b"\n",
                "more_body": True,
            }
        )
        record = registry.get(self._accepted["rollout_id"])
        if record is not None:  # (a retention of 0 may have dropped it already)
            registry.renew(record)
            with contextlib.suppress(RegistryClosedError):  # shutting down: the status so far
                await registry.wait_terminal(record, self._wait_sec)
            registry.renew(record)
        line = b"" if record is None else record.answer() + b"\n"
        await send({"type": "http.response.body", "body": line, "more_body": False})


def make_batch_endpoint(
    service: RolloutService, wait_sec: float, lease_sec: float
) -> Callable[[Request], Awaitable[Response]]:
    """``POST /rollouts`` bound to ``service``: ``{"rollouts": [body, ...]}`` in, 200 with
    ``{"results": [answer, ...]}`` out, each answer the body ``POST /rollout`` would have
    given plus its ``status_code`` (and ``retry_after_sec`` on a 429)."""

    async def submit_many(request: Request) -> Response:
        data = await read_json(request)
        if isinstance(data, Response):
            return data
        items = data.get("rollouts") if isinstance(data, dict) else None
        if not isinstance(items, list) or set(data) != {"rollouts"}:
            return _invalid_batch(
                "a JSON object with one key, 'rollouts': a list of rollout requests"
            )
        if not 1 <= len(items) <= MAX_BATCH:
            return _invalid_batch(
                f"'rollouts' must hold 1 to {MAX_BATCH} requests, got {len(items)}"
            )
        if not service.accepting or service.registry.closed:
            return error(503, "server is shutting down", _RETRY_LATER)
        results = []
        for i, item in enumerate(items):
            status, body, _ = admit_one(service, item, wait_sec, lease_sec, "rollouts", i)
            results.append({"status_code": status, **body})
        answer = to_json({"results": results})
        if NDJSON in request.headers.get("accept", ""):
            admitted = [
                service.registry.get(r["rollout_id"]) for r in results if r["status_code"] == 202
            ]
            # (a retention of 0 may have dropped one)
            records = [r for r in admitted if r is not None]
            if records:
                return AdmittedThenResults(service, answer, records, wait_sec)
        return Response(answer, media_type="application/json")

    return submit_many


class AdmittedThenResults(Response):
    """The 200 of ``POST /rollouts`` for a client that accepts ``application/x-ndjson``: the
    batched answer as the first line at once, then one line per admitted rollout, as each ends,
    with what ``GET /rollout/{id}/result?wait=terminal`` would answer (results that end together
    go out in one write); once the result wait runs out (or the server closes), the status so far
    of each one left. A rollout whose line did not come (the connection broke) is polled as
    usual: its lease holds. Leases are renewed at the start, and each with its line.
    """

    media_type = NDJSON

    def __init__(
        self, service: RolloutService, answer: bytes, records: list[RolloutRecord], wait_sec: float
    ) -> None:
        super().__init__(status_code=200, media_type=NDJSON)
        self._service = service
        self._answer = answer
        self._records = records
        self._wait_sec = wait_sec

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = [(k, v) for k, v in self.raw_headers if k != b"content-length"]  # sent chunked
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": self._answer + b"\n", "more_body": True})
        streaming = asyncio.ensure_future(self._stream(send))
        watcher = asyncio.ensure_future(_cancel_on_disconnect(receive, streaming))
        try:
            await streaming
        except asyncio.CancelledError:
            if not watcher.done() or watcher.cancelled():
                raise  # cancelled from outside, not by the client leaving
        finally:
            watcher.cancel()

    async def _stream(self, send: Any) -> None:
        registry = self._service.registry
        for record in self._records:
            registry.renew(record)
        sent: set[RolloutRecord] = set()

        async def deliver(finished: list[RolloutRecord]) -> None:
            for record in finished:
                registry.renew(record)
                sent.add(record)
            body = b"".join(record.answer() + b"\n" for record in finished)
            await send({"type": "http.response.body", "body": body, "more_body": True})

        with contextlib.suppress(RegistryClosedError):  # shutting down: the status so far
            await registry.stream_terminal(self._records, self._wait_sec, deliver)
        left = [r for r in self._records if r not in sent]
        for record in left:
            registry.renew(record)
        tail = b"".join(record.answer() + b"\n" for record in left)
        await send({"type": "http.response.body", "body": tail, "more_body": False})


async def _cancel_on_disconnect(receive: Any, task: asyncio.Future[None]) -> None:
    """Cancel ``task`` when the client goes away (its waits would otherwise hold until the end)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    task.cancel()


def _invalid_batch(msg: str) -> JSONResponse:
    return JSONResponse(
        {"detail": [{"loc": ["body"], "msg": msg, "type": "value_error"}]}, status_code=422
    )
