"""Request bodies: a size limit on every route (413) and JSON parsing with a depth limit.

Bad bodies are the client's fault and must never look retryable: an over-deep document made
Python's parser raise ``RecursionError``, which surfaced as a 503 with ``Retry-After``.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import from_json
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
#: Nesting allowed in a JSON body (chat messages with tool calls need well under 20).
MAX_JSON_DEPTH = 64


def error(status: int, detail: Any, headers: dict[str, str] | None = None) -> JSONResponse:
    """A JSON error answer carrying ``detail``."""
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


def invalid_detail(errors: list[dict[str, Any]], *loc: str | int) -> list[dict[str, Any]]:
    """Validation errors in FastAPI's shape (under ``body`` and ``loc``), input never echoed."""
    return [
        {
            "loc": ["body", *loc, *e.get("loc", ())],
            "msg": str(e.get("msg", "")),
            "type": str(e.get("type", "")),
        }
        for e in errors
    ]


def invalid(errors: list[dict[str, Any]]) -> JSONResponse:
    """A 422 in FastAPI's shape; the input is never echoed (NaN/inf are not JSON)."""
    return JSONResponse({"detail": invalid_detail(errors)}, status_code=422)


def _too_large(limit: int) -> bytes:
    return json.dumps(
        {"detail": f"request body larger than the server's limit of {limit} bytes"}
    ).encode()


class BodyLimitMiddleware:
    """Answers 413 to a body over ``max_bytes``, on every route, before the body is parsed.

    A declared ``Content-Length`` is checked up front (uvicorn enforces it); a chunked body is
    counted as it is read and buffered, so nothing downstream sees more than the limit.
    """

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length: bytes | None = None
        chunked = False
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                length = value
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
        if length is not None:
            if not length.strip().isdigit():
                await _send(send, 400, b'{"detail": "invalid Content-Length header"}')
            elif int(length) > self.max_bytes:
                await _send(send, 413, _too_large(self.max_bytes))
            else:
                await self.app(scope, receive, send)
            return
        if not chunked:
            await self.app(scope, receive, send)  # no body at all
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break  # client gone
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await _send(send, 413, _too_large(self.max_bytes))
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()  # later: disconnect notifications for long polls

        await self.app(scope, replay, send)


async def _send(send: Any, status: int, body: bytes) -> None:
    await send_json(send, status, body, [(b"connection", b"close")])


async def send_json(
    send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    """Answer ``status`` with the JSON ``body`` by the two ASGI messages, no Response object."""
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if headers:
        raw += headers
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _wants_json(content_type: str | None) -> bool:
    if not content_type:
        return True
    mime = content_type.split(";", 1)[0].strip().lower()
    kind, _, subtype = mime.partition("/")
    return kind == "application" and (subtype == "json" or subtype.endswith("+json"))


def _depth_exceeds(value: Any, limit: int) -> bool:
    # Iterative: the point is to refuse documents too deep for recursive code downstream.
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def _loads(raw: bytes) -> Any:
    # The Rust parser pydantic ships is ~2x faster; anything it refuses (NaN, non-UTF-8, deep
    # nesting, bad syntax) goes to Python's, whose answer and errors are the contract.
    try:
        return from_json(raw, allow_inf_nan=False)
    except ValueError:
        return json.loads(raw)


async def read_json(request: Request) -> Any | Response:
    """The request's JSON body, or the 4xx answer that explains what is wrong with it
    (see :func:`parse_json`)."""
    return parse_json(await request.body(), request.headers.get("content-type"))


def header(scope: Scope, name: bytes) -> bytes | None:
    """The first value of the request header ``name`` (lower case), as Starlette's lookup gives."""
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


async def read_body(receive: Any) -> bytes | None:
    """The whole request body from ASGI ``receive``; None if the client left before sending it."""
    message = await receive()
    if message["type"] != "http.request":
        return None
    body: bytes = message.get("body", b"")
    if not message.get("more_body", False):
        return body  # the common case: one message
    chunks = [body]
    while message.get("more_body", False):
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
    return b"".join(chunks)


def parse_json(raw: bytes, content_type: str | None) -> Any | Response:
    """A request body as FastAPI reads it, or the 4xx answer that explains what is wrong with it.

    JSON for a missing, ``application/json`` or ``+json`` content type (Python's parser, so NaN
    reaches the validators), the raw bytes otherwise; an empty body is a 422.
    """
    if not raw:
        return invalid([{"loc": (), "msg": "Field required", "type": "missing"}])
    if content_type != "application/json" and not _wants_json(content_type):
        return raw
    try:
        data = _loads(raw)
    except json.JSONDecodeError as exc:
        return invalid([{"loc": (exc.pos,), "msg": "JSON decode error", "type": "json_invalid"}])
    except RecursionError:
        return error(400, f"request body nests deeper than {MAX_JSON_DEPTH} levels")
    except ValueError:  # not UTF-8/16/32
        return error(400, "request body is not UTF-8 JSON")
    # Cheap pre-check: a document with few brackets cannot be deep.
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH and _depth_exceeds(data, MAX_JSON_DEPTH):
        return error(400, f"request body nests deeper than {MAX_JSON_DEPTH} levels")
    return data
