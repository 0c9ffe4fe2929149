"""The tools of an environment's MCP servers: listed once when the environment is built."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from verifiers_lite._util.sync import run_sync

from .config import MCPServerConfig, check_servers
from .connection import MCPConnection
from .lifetime import ServerHandle
from .tool import MCPTool

if TYPE_CHECKING:
    from mcp.types import Tool

__all__ = ["MCPToolset"]

# What OpenAI-compatible endpoints accept as a function name.
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class MCPToolset:
    """The servers' tools (:attr:`tools`, in server order, then each server's order).

    Building it starts each server once (a throwaway connection) to list its tools, so a server
    that cannot start, or a tool name clash, is an error before any rollout. Calls then go
    through each server's lifetime (:class:`~verifiers_lite.tools.mcp.lifetime.ServerHandle`).
    """

    def __init__(self, servers: Sequence[MCPServerConfig], *, taken: Sequence[str] = ()) -> None:
        self.servers = [ServerHandle(config) for config in check_servers(servers)]
        specs = run_sync(_list_all([s.config for s in self.servers]))
        self.tools: list[MCPTool] = []
        owners = {name: "a Python tool" for name in taken}
        for handle, server_specs in zip(self.servers, specs, strict=True):
            for spec in server_specs:
                tool = MCPTool(handle, spec)
                _check_name(tool, owners)
                owners[tool.name] = f"MCP server '{handle.config.label}'"
                self.tools.append(tool)

    async def aclose(self) -> None:
        """Stop the shared servers started outside a run (a run stops its own when it ends)."""
        for handle in self.servers:
            await handle.aclose()

    def close(self) -> None:
        """Sync twin of :meth:`aclose`."""
        run_sync(self.aclose())


def _check_name(tool: MCPTool, owners: dict[str, str]) -> None:
    server = tool.server.config.label
    if not _TOOL_NAME.match(tool.name):
        raise ValueError(
            f"MCP server '{server}' offers a tool named {tool.name!r}: a tool name for the model is 1-64 "
            "letters, digits, '_' or '-'"
        )
    if tool.name in owners:
        raise ValueError(
            f"tool name {tool.name!r} is offered by {owners[tool.name]} and by MCP server '{server}'; "
            "give the server a tool_prefix"
        )


async def _list_all(configs: list[MCPServerConfig]) -> list[list[Tool]]:
    # A task group: one server failing stops the others' listing before the error is raised.
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_list_one(c)) for c in configs]
    except BaseExceptionGroup as eg:
        raise eg.exceptions[0] from None
    return [t.result() for t in tasks]


async def _list_one(config: MCPServerConfig) -> list[Tool]:
    conn = await MCPConnection(config).open()
    try:
        return list(await conn.list_tools())
    finally:
        await conn.aclose()
