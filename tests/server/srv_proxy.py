"""A fault-injecting HTTP proxy (raw asyncio): answers 502/503/504, drops or hangs requests."""

from __future__ import annotations

import asyncio
from collections import deque


class FaultProxy:
    """Forwards each request to ``upstream`` on a fresh connection, unless a fault is queued.

    Faults apply to requests whose path contains ``match``: "404"/"502"/"503"/"504" answer that status,
    "drop" closes the connection without a response, "hang" never answers, "redirect" answers 307.
    """

    def __init__(self, upstream_port: int, match: str = "/result") -> None:
        self.upstream_port = upstream_port
        self.match = match
        self.faults: deque[str] = deque()
        self.always: str | None = None
        self.seen: list[str] = []
        self._server: asyncio.AbstractServer | None = None
        self.port = 0

    async def start(self) -> FaultProxy:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            body = await reader.readexactly(length) if length else b""
            path = head.split(b" ", 2)[1].decode()
            fault = None
            if self.match in path:
                fault = self.faults.popleft() if self.faults else self.always
            self.seen.append(f"{fault or 'pass'} {path}")
            if fault in ("404", "502", "503", "504"):
                writer.write(
                    f"HTTP/1.1 {fault} Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".encode()
                )
            elif fault == "redirect":
                writer.write(
                    f"HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:{self.upstream_port}{path}"
                    "\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".encode()
                )
            elif fault == "hang":
                await asyncio.sleep(3600)
            elif fault != "drop":
                await self._forward(head, body, writer)
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _forward(self, head: bytes, body: bytes, writer: asyncio.StreamWriter) -> None:
        # One request per upstream connection; "connection: close" makes upstream end the reply.
        lines = [
            ln for ln in head.split(b"\r\n") if ln and not ln.lower().startswith(b"connection:")
        ]
        request = b"\r\n".join(lines) + b"\r\nconnection: close\r\n\r\n" + body
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        up_writer.write(request)
        await up_writer.drain()
        raw = await up_reader.read()
        up_writer.close()
        head_end = raw.find(b"\r\n\r\n")
        resp_head = [
            ln for ln in raw[:head_end].split(b"\r\n") if not ln.lower().startswith(b"connection:")
        ]
        writer.write(b"\r\n".join(resp_head) + b"\r\nconnection: close" + raw[head_end:])
