"""Bearer-token authentication for every route, as raw ASGI middleware."""

from __future__ import annotations

import hmac
import json
from typing import Any

Scope = dict[str, Any]


def check_api_key(api_key: str | None) -> str | None:
    """Validate an optional API key: ``None`` disables auth, blank keys are refused."""
    if api_key is None:
        return None
    if not isinstance(api_key, str) or not api_key.strip():
        raise ValueError("api_key must be a non-empty string (or None to disable auth)")
    return api_key


def bearer_value(api_key: str) -> bytes:
    """The exact ``Authorization`` header value that ``api_key`` requires."""
    return f"Bearer {api_key}".encode()


class BearerAuthMiddleware:
    """Answers 401 before routing, so unknown paths and bad bodies never leak a 404/422."""

    def __init__(self, app: Any, api_key: str) -> None:
        self.app = app
        self._expected = bearer_value(api_key)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = b""
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                given = value
                break
        # Constant-time comparison: the key must not be guessable from response timing.
        if hmac.compare_digest(given, self._expected):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"detail": "missing or invalid bearer token"}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b"Bearer"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
