"""One MCP session with one server, through the official ``mcp`` SDK, on the loop that opened it.

The SDK's transports and sessions are anyio context managers whose scopes must be left in the
task that entered them, so a task of the connection's own enters them, holds them while the
connection is open and leaves them on :meth:`MCPConnection.aclose`; any task of the same event
loop may call tools meanwhile. A stdio server is the SDK's subprocess in a session of its own:
closing sends EOF on its stdin, then SIGTERM and SIGKILL to its process group (bounded waits,
shielded from cancellation), so no process outlives the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import AsyncIterator
from typing import IO, TYPE_CHECKING, Any

import anyio

from verifiers_lite._util.extras import require
from verifiers_lite.core.errors import ToolServerError

from .config import MCPHTTPServer, MCPServerConfig, MCPStdioServer

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult, Tool

__all__ = ["MCPConnection", "exception_text"]

_CLOSE_S = 15.0  # the SDK's own shutdown is bounded by ~5 s; this only guards against a hang
_STDERR_TAIL = 1000


def _mcp() -> Any:
    return require("mcp", "MCP tool servers", "mcp")


def exception_text(exc: BaseException) -> str:
    """``Type: message`` of an exception, the innermost one of an anyio exception group."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class MCPConnection:
    """An open MCP session with the server of ``config`` (start it with :meth:`open`).

    ``lost`` says why the connection is gone (None while it works): a connection that failed
    is never used again."""

    def __init__(self, config: MCPServerConfig) -> None:
        self.config = config
        self.session: ClientSession | None = None
        self.lost: str | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stderr: IO[bytes] | None = None

    async def open(self) -> MCPConnection:
        """Start (or reach) the server and complete the MCP handshake; a failure is a
        :class:`ToolServerError` naming the server, with the tail of its stderr."""
        self.loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = self.loop.create_future()
        self._stop = asyncio.Event()
        self._owner = self.loop.create_task(
            self._hold(ready), name=f"mcp-server:{self.config.label}"
        )
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.config.startup_timeout)
        except TimeoutError:
            await self.aclose()
            raise ToolServerError(
                self.describe(
                    f"did not complete the MCP handshake within startup_timeout={self.config.startup_timeout:g}s"
                )
            ) from None
        except BaseException:
            await self.aclose()
            raise
        return self

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        """Enter the transport and the session, wait for :meth:`aclose`, leave them."""
        assert self._stop is not None
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                # The server's messages pass through a watcher that marks the connection lost as
                # soon as the server closes it (exits, crashes), so the next call of a shared
                # server starts it again instead of writing to a dead pipe.
                forward, watched = anyio.create_memory_object_stream[Any](0)
                watcher = await stack.enter_async_context(anyio.create_task_group())
                watcher.start_soon(self._watch, read, forward)
                stack.callback(watcher.cancel_scope.cancel)  # left before the transport is
                session = await stack.enter_async_context(_mcp().ClientSession(watched, write))
                await session.initialize()
                self.session = session
                ready.set_result(None)
                await self._stop.wait()
        except Exception as exc:
            self.lost = self.lost or exception_text(exc)
            if not ready.done():
                ready.set_exception(
                    ToolServerError(self.describe(f"could not be started: {exception_text(exc)}"))
                )
        finally:
            self.session = None
            self.lost = self.lost or "closed"
            if not ready.done():  # cancelled before the handshake ended
                ready.cancel()

    async def _watch(self, read: Any, forward: Any) -> None:
        """Pass the server's messages on to the session; at their end, mark the connection lost."""
        async with forward:
            try:
                async for message in read:
                    await forward.send(message)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return  # the session is gone: we are closing
        self.lost = self.lost or "the server closed the connection (it exited or crashed)"

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        config = self.config
        if isinstance(config, MCPStdioServer):
            mcp = _mcp()
            # The server's stderr, quoted when it fails; open while it runs, closed by aclose.
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
            params = mcp.StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=dict(config.env or {}),
                cwd=config.cwd,
            )
            return mcp.stdio_client(params, errlog=self._stderr)
        assert isinstance(config, MCPHTTPServer)
        return _http_transport(config)

    async def list_tools(self) -> list[Tool]:
        """Every tool the server offers (all pages)."""
        session = self._session()
        tools: list[Tool] = []
        cursor: str | None = None
        while True:
            params = _mcp().types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """The server's result of one call (the SDK's exceptions pass through)."""
        return await self._session().call_tool(name, arguments)

    def _session(self) -> ClientSession:
        if self.session is None:
            raise ToolServerError(self.describe(f"is not connected ({self.lost or 'not opened'})"))
        return self.session

    def describe(self, what: str) -> str:
        """``MCP server '<name>' <what>``, with the tail of its stderr when it has one."""
        text = f"MCP server '{self.config.label}' {what}"
        tail = self._stderr_tail()
        return f"{text}; its stderr ends with: {tail}" if tail else text

    def _stderr_tail(self) -> str:
        if self._stderr is None or self._stderr.closed:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._stderr.flush()
            size = self._stderr.seek(0, 2)
            self._stderr.seek(max(0, size - _STDERR_TAIL))
            return self._stderr.read().decode("utf-8", "replace").strip()
        return ""

    async def aclose(self) -> None:
        """Leave the session and the transport (a stdio server is stopped), waiting for it even
        when the caller is cancelled meanwhile (then re-raising the cancellation)."""
        owner, self._owner = self._owner, None
        if owner is None:
            return
        self.lost = self.lost or "closed"
        assert self._stop is not None
        self._stop.set()
        if self.session is None:
            owner.cancel()  # still starting (or never answered): nothing to wind down gracefully
        cancelled = False
        try:
            await _wait_shielded(owner, _CLOSE_S)
        except asyncio.CancelledError:
            cancelled = True
            await _wait_shielded(owner, _CLOSE_S)
        finally:
            if self._stderr is not None:
                self._stderr.close()
        if cancelled:
            raise asyncio.CancelledError()


async def _wait_shielded(task: asyncio.Task[None], timeout: float) -> None:
    """Wait for ``task`` to end, however it ends (a cancellation of ours is raised, ``task``
    goes on); past ``timeout`` cancel it."""
    done, _ = await asyncio.wait([task], timeout=timeout)
    if not done:
        task.cancel()
        await asyncio.wait([task], timeout=timeout)


@contextlib.asynccontextmanager
async def _http_transport(config: MCPHTTPServer) -> AsyncIterator[Any]:
    """The SDK's streamable-HTTP transport over an HTTP client that sends ``config.headers``."""
    mcp = _mcp()
    import httpx2

    # The SDK's recommended timeouts: 30 s to connect, 300 s to read (a server may hold a stream open).
    client = httpx2.AsyncClient(
        headers=dict(config.headers or {}), timeout=httpx2.Timeout(30.0, read=300.0)
    )
    async with (
        client,
        mcp.client.streamable_http.streamable_http_client(
            config.url, http_client=client
        ) as streams,
    ):
        yield streams
