"""A fault-injecting HTTP proxy for model endpoints (raw asyncio, loopback only).

Sits between a model client and an OpenAI-compatible server and, for a seeded random share of
requests, answers 500 / 502 / 429 (with Retry-After), resets the connection, or stalls; other
requests are forwarded untouched. Every response closes its connection, so each request is
judged on its own. ``counts`` holds requests by fault, ``paths`` by path. A stall lasts until the
client hangs up or ``stall_s`` passes;
``stalls_cut`` counts the stalls the client gave up on first (its own timeout worked).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import Counter
from dataclasses import dataclass, field

FAULTS = ("500", "502", "429", "reset", "stall")


@dataclass
class FaultProxy:
    """Forwards to ``upstream_port``; ``rate`` of requests get a fault drawn from ``faults``."""

    upstream_port: int
    rate: float = 0.3
    faults: tuple[str, ...] = FAULTS
    stall_s: float = 30.0
    retry_after_s: float = 0.05
    seed: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    paths: Counter[str] = field(default_factory=Counter)
    stalls_cut: int = 0

    def __post_init__(self) -> None:
        unknown = set(self.faults) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}; known: {FAULTS}")
        self._rng = random.Random(self.seed)
        self._server: asyncio.AbstractServer | None = None
        self._handling: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> FaultProxy:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        """Stop listening, then wait for the requests in progress (a stall the client never
        hangs up on ends after ``stall_s``), so ``counts`` and ``stalls_cut`` are final."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
        if self._handling:
            await asyncio.wait(self._handling)

    def _draw(self) -> str:
        return self._rng.choice(self.faults) if self._rng.random() < self.rate else "pass"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._handling.add(task)
            task.add_done_callback(self._handling.discard)
        try:
            # Drawn and counted once the request line has arrived: a client that gives up
            # before the whole request is read (a loaded machine, a short timeout) has still made
            # its attempt, and a connection abandoned before it sent anything has made none.
            request_line = await reader.readuntil(b"\r\n")
            self.paths[_path_of(request_line)] += 1
            fault = self._draw()
            self.counts[fault] += 1
            if fault == "reset":
                writer.transport.abort()  # RST: the client sees a reset connection
                return
            if fault == "stall":
                cut = await self._client_hangs_up_within(reader, self.stall_s)
                self.stalls_cut += cut  # read after the await: concurrent stalls all count
                return
            head = request_line + await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")[1:]
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            body = await reader.readexactly(length) if length else b""
            if fault == "pass":
                writer.write(await self._forward(head, body))
            else:
                extra = f"retry-after: {self.retry_after_s}\r\n" if fault == "429" else ""
                payload = b'{"error": {"message": "injected by FaultProxy"}}'
                writer.write(
                    f"HTTP/1.1 {fault} Injected\r\ncontent-type: application/json\r\n{extra}"
                    f"content-length: {len(payload)}\r\nconnection: close\r\n\r\n".encode()
                    + payload
                )
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    @staticmethod
    async def _client_hangs_up_within(reader: asyncio.StreamReader, seconds: float) -> bool:
        try:
            await asyncio.wait_for(reader.read(), seconds)  # returns at the client's EOF
        except TimeoutError:
            return False
        except ConnectionError:
            pass  # a reset is a hang-up too
        return True

    async def _forward(self, head: bytes, body: bytes) -> bytes:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        lines = [
            ln for ln in head.split(b"\r\n") if ln and not ln.lower().startswith(b"connection:")
        ]
        up_writer.write(b"\r\n".join(lines) + b"\r\nconnection: close\r\n\r\n" + body)
        await up_writer.drain()
        response = await up_reader.read()  # upstream closes after one response
        up_writer.close()
        return response


def _path_of(request_line: bytes) -> str:
    parts = request_line.split()
    return parts[1].decode(errors="replace").split("?", 1)[0] if len(parts) >= 2 else ""
