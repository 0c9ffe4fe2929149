"""A lean HTTP/1.1 load generator for the rollout-server benchmark (loopback, JSON only).

The long-poll and scale runs share the machine's cores between the server and its clients, so
what a client costs per request shows up as server latency. aiohttp costs about twice the
server's own CPU per request here; this client (one asyncio protocol per connection,
keep-alive, Content-Length bodies only: what the server answers to plain JSON requests) costs a
fraction of it, so that the figures are the server's. Every request that is in flight at once
has its own connection, as a fleet of independent clients would.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic_core import from_json, to_json


class _Connection(asyncio.Protocol):
    """One keep-alive connection; one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._reply: asyncio.Future[tuple[int, bytes]] | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._reply is not None and not self._reply.done():
            self._reply.set_exception(ConnectionError(f"connection lost: {exc}"))

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0 or self._reply is None:
            return
        head = bytes(self._buffer[:end]).split(b"\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head[1:]
            if line[:15].lower() == b"content-length:"
        )
        if len(self._buffer) < end + 4 + length:
            return
        body = bytes(self._buffer[end + 4 : end + 4 + length])
        del self._buffer[: end + 4 + length]
        reply, self._reply = self._reply, None
        if not reply.done():  # (its caller may have given up)
            reply.set_result((int(head[0].split(b" ", 2)[1]), body))

    def send(self, request: bytes) -> asyncio.Future[tuple[int, bytes]]:
        assert self.transport is not None and self._reply is None
        self._reply = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self._reply


class LoadClient:
    """``await client.request("POST", "/rollout", json=...)`` -> ``(status, parsed JSON)``."""

    def __init__(self, url: str) -> None:
        host_port = url.removeprefix("http://").rstrip("/")
        self._host, port = host_port.rsplit(":", 1)
        self._port = int(port)
        self._idle: list[_Connection] = []
        self._all: list[_Connection] = []

    async def _connection(self) -> _Connection:
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed:
                return conn
        _, conn = await asyncio.get_running_loop().create_connection(
            _Connection, self._host, self._port
        )
        self._all.append(conn)
        return conn

    async def request(
        self, method: str, path: str, *, json: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        body = b"" if json is None else to_json(json)
        lines = [f"{method} {path} HTTP/1.1", f"host: {self._host}", f"content-length: {len(body)}"]
        if json is not None:
            lines.append("content-type: application/json")
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        conn = await self._connection()
        status, content = await conn.send(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        self._idle.append(conn)
        return status, from_json(content)

    async def __aenter__(self) -> LoadClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        for conn in self._all:
            if conn.transport is not None:
                conn.transport.close()
