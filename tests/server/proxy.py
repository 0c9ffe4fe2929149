"""Fault-injecting HTTP proxies (raw asyncio): one answers 502/503/504, drops or hangs requests; one
ends every ndjson answer after its first line."""

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


class CutAfterFirstLine:
    """A TCP proxy that ends every ndjson answer right after its first line. ``refuse_batched``:
    it stands for a server without the batched routes (``POST /rollouts`` answers 404, as an
    older one does). ``polls`` counts the result polls it forwarded."""

    def __init__(self, upstream_port: int, *, refuse_batched: bool = True) -> None:
        self.upstream_port = upstream_port
        self.refuse_batched = refuse_batched
        self.cut = 0
        self.refused = 0
        self.polls = 0
        self.port = 0

    async def start(self) -> CutAfterFirstLine:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def close(self) -> None:
        self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = await reader.read(65536)
        self.polls += first.startswith((b"POST /rollouts/results", b"GET /rollout/"))
        if self.refuse_batched and first.startswith(b"POST /rollouts"):
            self.refused += 1
            writer.write(
                b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            await writer.drain()
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        up_writer.write(first)

        async def pipe_up() -> None:
            while data := await reader.read(65536):
                up_writer.write(data)
                await up_writer.drain()

        up = asyncio.ensure_future(pipe_up())
        seen = b""
        try:
            while data := await up_reader.read(65536):
                seen += data
                head, _, body = seen.partition(b"\r\n\r\n")
                if b"x-ndjson" in head and b"}\n" in body:  # chunked: the first line is in
                    writer.write(data[: len(data) - (len(body) - body.index(b"}\n") - 2)])
                    await writer.drain()
                    self.cut += 1
                    return
                writer.write(data)
                await writer.drain()
                if b"x-ndjson" not in head:
                    seen = b""  # one plain answer after another on a kept-alive connection
        finally:
            up.cancel()
            writer.close()
            up_writer.close()
