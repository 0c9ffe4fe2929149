"""How long an MCP server lives: one per run (shared) or one per rollout attempt.

A shared server is started on first use on the event loop that uses it and is held by every
run scope (``generate``, a rollout server's lifetime) that used it: it stops when the last of
them ends, or on :meth:`ServerHandle.aclose` when it was used outside any run. A server that
crashed is started again for the next call (its state is gone). A per-rollout server is
started on the rollout's first call and stopped when its rollout attempt ends.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from verifiers_lite._util.scopes import ResourceScope, current_rollout_scope, current_run_scope
from verifiers_lite.core.errors import ToolServerError

from .config import MCPServerConfig
from .connection import MCPConnection

__all__ = ["ServerHandle"]


@dataclass(eq=False)
class _Shared:
    """The shared connection of one event loop and who holds it."""

    conn: MCPConnection | None = None
    opening: asyncio.Task[MCPConnection] | None = None
    holders: set[int] = field(default_factory=set)  # ids of the run scopes that used it
    unscoped: bool = False  # used outside any run: held until ServerHandle.aclose


class ServerHandle:
    """The connections to one configured server, by lifetime."""

    def __init__(self, config: MCPServerConfig) -> None:
        self.config = config
        self._shared: dict[asyncio.AbstractEventLoop, _Shared] = {}
        self._per_rollout: dict[int, asyncio.Task[MCPConnection]] = {}

    def __getstate__(self) -> dict[str, object]:
        # Shipped to another process (a Ray worker): its connections stay here, it opens its own.
        return {"config": self.config}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(state["config"])  # type: ignore[misc, arg-type]

    async def connection(self) -> MCPConnection:
        """The connection this call should use (started if needed)."""
        if self.config.lifetime == "rollout":
            return await self._rollout_connection()
        return await self._shared_connection()

    # -- per rollout ---------------------------------------------------------------------------

    async def _rollout_connection(self) -> MCPConnection:
        scope = current_rollout_scope()
        if scope is None:
            raise ToolServerError(
                f"MCP server '{self.config.label}' has lifetime='rollout' but was called outside a rollout "
                "(an environment's rollout holds one); use lifetime='shared', e.g. one ToolManager per "
                "trajectory for the token engine"
            )
        key = id(scope)
        opening = self._per_rollout.get(key)
        if opening is None:
            opening = asyncio.ensure_future(MCPConnection(self.config).open())
            self._per_rollout[key] = opening
            scope.add(lambda: self._close_rollout(key))
        conn = await asyncio.shield(opening)
        if conn.lost is not None:
            raise ToolServerError(
                f"MCP server '{self.config.label}' of this rollout is gone ({conn.lost})"
            )
        return conn

    async def _close_rollout(self, key: int) -> None:
        opening = self._per_rollout.pop(key, None)
        if opening is None:
            return
        if not opening.done():
            opening.cancel()  # open() closes what it started when cancelled
        results = await asyncio.gather(opening, return_exceptions=True)
        if isinstance(results[0], MCPConnection):
            await results[0].aclose()

    # -- shared --------------------------------------------------------------------------------

    async def _shared_connection(self) -> MCPConnection:
        loop = asyncio.get_running_loop()
        entry = self._shared.get(loop)
        if entry is None:
            entry = self._shared[loop] = _Shared()
        self._hold(entry, loop, current_run_scope())
        if entry.conn is not None and entry.conn.lost is None:
            return entry.conn
        if entry.opening is None or entry.opening.done():
            entry.opening = asyncio.ensure_future(self._reopen(entry))
        # Shielded: one caller cancelled (its rollout timed out) must not cancel the others' start.
        return await asyncio.shield(entry.opening)

    async def _reopen(self, entry: _Shared) -> MCPConnection:
        old, entry.conn = entry.conn, None
        if old is not None:
            await old.aclose()  # a crashed server's transport and process are reaped first
        entry.conn = await MCPConnection(self.config).open()
        return entry.conn

    def _hold(
        self, entry: _Shared, loop: asyncio.AbstractEventLoop, scope: ResourceScope | None
    ) -> None:
        if scope is None:
            entry.unscoped = True
        elif id(scope) not in entry.holders:
            scope.add(lambda: self._release(loop, entry, id(scope)))
            entry.holders.add(id(scope))

    async def _release(self, loop: asyncio.AbstractEventLoop, entry: _Shared, holder: int) -> None:
        entry.holders.discard(holder)
        if not entry.holders and not entry.unscoped:
            await self._close_shared(loop, entry)

    async def _close_shared(self, loop: asyncio.AbstractEventLoop, entry: _Shared) -> None:
        if self._shared.get(loop) is entry:
            del self._shared[loop]
        if entry.opening is not None and not entry.opening.done():
            entry.opening.cancel()
            await asyncio.gather(entry.opening, return_exceptions=True)
        if entry.conn is not None:
            await entry.conn.aclose()

    async def aclose(self) -> None:
        """Stop this loop's shared server (the others' when their loop still runs)."""
        current = asyncio.get_running_loop()
        for loop, entry in list(self._shared.items()):
            if loop is current:
                await self._close_shared(loop, entry)
            elif loop.is_running():
                future = asyncio.run_coroutine_threadsafe(self._close_shared(loop, entry), loop)
                await asyncio.wrap_future(future)
            else:  # a loop that is gone: its tasks (and the SDK's process) cannot be driven
                del self._shared[loop]
