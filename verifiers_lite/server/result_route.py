"""``GET /rollout/{id}/result`` as a raw ASGI app: the server's hottest route.

It is served without FastAPI's dependency solving and response-model validation (each a
pydantic round trip per poll), nor Starlette's Request and Response objects; the terminal
result is serialised once, when it is published.
Query ``seen=<status>`` waits for a change from that status (the default contract);
``wait=terminal`` waits for the terminal result only, so one poll per rollout suffices.
``POST /rollouts/results`` long-polls many rollouts in one request (a burst of results that
finish together costs one answer, not one each).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from verifiers_lite.server.protocol import LEASE_HEADER, RolloutStatus

from .admission_route import MAX_BATCH
from .bodies import header, read_json, send_json
from .rollout_table import RegistryClosedError
from .service import RolloutService

_STATUSES = frozenset(s.value for s in RolloutStatus)
_WAIT_MODES = frozenset({"change", "terminal"})
_RETRY_LATER = {"Retry-After": "1"}
_LEASE_KEY = LEASE_HEADER.lower().encode("latin-1")


def _parse_query(raw: bytes) -> dict[str, str]:
    # parse_qsl directly: Starlette's QueryParams multidict cost more than the whole lookup.
    return dict(parse_qsl(raw.decode("latin-1"), keep_blank_values=True))


#: What clients send, parsed once (read only): parsing cost a poll as much as its lookup.
_COMMON_QUERIES = {
    q: _parse_query(q)
    for q in (b"wait=terminal", b"wait=change", *(f"seen={s}".encode() for s in sorted(_STATUSES)))
}


def _invalid(loc: list[str], msg: str, kind: str) -> JSONResponse:
    # Same shape as the app's RequestValidationError answer.
    return JSONResponse({"detail": [{"loc": loc, "msg": msg, "type": kind}]}, status_code=422)


def _error(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


class ResultEndpoint:
    """``GET /rollout/{id}/result`` bound to ``service``, as a raw ASGI app: every rollout's poll,
    so it answers by the two ASGI messages, without Starlette's Request and Response objects.
    Every poll renews the lease, before and after waiting.
    """

    def __init__(self, service: RolloutService, wait_sec: float) -> None:
        self._service = service
        self._wait_sec = wait_sec

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        answer = await self._answer(scope)
        if isinstance(answer, bytes):
            await send_json(send, 200, answer)
        else:
            await answer(scope, receive, send)

    async def _answer(self, scope: Scope) -> bytes | Response:
        """The result body, or the error answer."""
        service, registry = self._service, self._service.registry
        lease = header(scope, _LEASE_KEY)
        if lease is None:
            return _invalid(["header", LEASE_HEADER], "Field required", "missing")
        query = _COMMON_QUERIES.get(scope["query_string"])
        if query is None:
            query = _parse_query(scope["query_string"])
        seen = query.get("seen")
        if seen is not None and seen not in _STATUSES:
            return _invalid(["query", "seen"], f"must be one of {sorted(_STATUSES)}", "enum")
        mode = query.get("wait", "change")
        if mode not in _WAIT_MODES:
            return _invalid(["query", "wait"], "must be 'change' or 'terminal'", "enum")
        rollout_id = scope["path_params"]["rollout_id"]
        record = registry.get(rollout_id)
        if record is None:
            return _error(404, f"unknown rollout_id {rollout_id!r}")
        if not hmac.compare_digest(lease, record.lease_token.encode()):
            return _error(403, "polling lease token does not match this rollout")
        await service.expire_if_due(record)  # a lapsed lease is not revived by a late poll
        registry.renew(record)
        try:
            if mode == "terminal":
                await registry.wait_terminal(record, self._wait_sec)
            else:
                await registry.wait_change(
                    record, RolloutStatus(seen) if seen else None, self._wait_sec
                )
        except RegistryClosedError:
            return _error(503, "server is shutting down; retry", _RETRY_LATER)
        registry.renew(record)
        return record.answer()


def make_batch_result_endpoint(
    service: RolloutService, wait_sec: float
) -> Callable[[Request], Awaitable[Response]]:
    """``POST /rollouts/results``: ``{"leases": {rollout_id: token, ...}}`` in; it answers once
    any of them is terminal (or after the result wait), 200 with ``{"results": [...]}``: for
    each id in order, what ``GET /rollout/{id}/result?wait=terminal`` would have answered
    then, plus its ``status_code`` (404 unknown id, 403 wrong lease). Every lease is renewed."""
    registry = service.registry

    async def results(request: Request) -> Response:
        data = await read_json(request)
        if isinstance(data, Response):
            return data
        leases = data.get("leases") if isinstance(data, dict) else None
        if (
            not isinstance(leases, dict)
            or set(data) != {"leases"}
            or not 1 <= len(leases) <= MAX_BATCH
            or not all(isinstance(v, str) for v in leases.values())
        ):
            msg = f"a JSON object with one key, 'leases': 1 to {MAX_BATCH} rollout ids, each to its lease token"
            return _invalid(["body"], msg, "value_error")
        answers: dict[str, bytes] = {}
        records = []
        for rollout_id, lease in leases.items():
            record = registry.get(rollout_id)
            if record is None:
                answers[rollout_id] = _item(404, f"unknown rollout_id {rollout_id!r}")
            elif not hmac.compare_digest(lease.encode(), record.lease_token.encode()):
                answers[rollout_id] = _item(403, "polling lease token does not match this rollout")
            else:
                records.append(record)
        for record in records:
            await service.expire_if_due(record)
            registry.renew(record)
        if records:
            try:
                await registry.wait_any_terminal(records, wait_sec)
            except RegistryClosedError:
                return _error(503, "server is shutting down; retry", _RETRY_LATER)
        for record in records:
            registry.renew(record)
            body = record.answer()
            answers[record.rollout_id] = b'{"status_code":200,' + body[1:]
        return Response(
            b'{"results":[' + b",".join(answers[i] for i in leases) + b"]}",
            media_type="application/json",
        )

    return results


def _item(status: int, detail: str) -> bytes:
    return json.dumps({"status_code": status, "detail": detail}).encode()
