"""Where an environment's MCP servers are and how long each lives: the typed server configs."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

__all__ = ["Lifetime", "MCPHTTPServer", "MCPServerConfig", "MCPStdioServer", "check_servers"]

Lifetime = Literal["shared", "rollout"]
"""``shared``: one server (one session) for the whole run, every rollout calling it; ``rollout``:
a fresh one for each rollout, so no rollout sees another's state."""

_PREFIX = re.compile(r"^[A-Za-z0-9_-]*$")


def _check_common(
    kind: str, name: str | None, lifetime: str, startup_timeout: float, tool_prefix: str
) -> None:
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise ValueError(f"{kind}: name must be a non-empty string, got {name!r}")
    if lifetime not in get_args(Lifetime):
        raise ValueError(
            f"{kind}: lifetime must be one of {', '.join(get_args(Lifetime))}; got {lifetime!r}"
        )
    if (
        not isinstance(startup_timeout, (int, float))
        or not math.isfinite(startup_timeout)
        or startup_timeout <= 0
    ):
        raise ValueError(
            f"{kind}: startup_timeout must be a positive number of seconds, got {startup_timeout!r}"
        )
    if not isinstance(tool_prefix, str) or not _PREFIX.match(tool_prefix):
        raise ValueError(
            f"{kind}: tool_prefix may hold only letters, digits, '_' and '-'; got {tool_prefix!r}"
        )


def _check_strings(kind: str, what: str, mapping: Mapping[str, str] | None) -> None:
    if mapping is None:
        return
    if not isinstance(mapping, Mapping):
        raise TypeError(
            f"{kind}: {what} must be a mapping of strings to strings, got {type(mapping).__name__}"
        )
    bad = [k for k, v in mapping.items() if not isinstance(k, str) or not isinstance(v, str)]
    if bad:
        raise TypeError(f"{kind}: {what} must map strings to strings; not so for {bad[:3]}")


@dataclass(frozen=True, kw_only=True)
class MCPStdioServer:
    """An MCP server the library starts as a subprocess and talks to over its stdin/stdout.

    Args:
        command: the executable (``sys.executable``, ``"npx"``, ``"uvx"``, a path).
        args: its arguments.
        env: environment variables for it, added to the few the MCP SDK passes on (``HOME``,
            ``PATH``, ``SHELL``, ``TERM``, ``USER``, ``LOGNAME``): nothing else of this process's
            environment reaches it unless named here.
        cwd: its working directory (default: this process's).
        name: how errors and logs name it (default: the command line).
        lifetime: ``"shared"`` (default; one process for the whole run) or ``"rollout"`` (one
            process per rollout attempt, stopped when the attempt ends).
        startup_timeout: seconds for it to start and answer the MCP handshake.
        tool_prefix: put before each of its tool names (two servers with a tool of one name).
    """

    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    name: str | None = None
    lifetime: Lifetime = "shared"
    startup_timeout: float = 30.0
    tool_prefix: str = ""

    def __post_init__(self) -> None:
        kind = "MCPStdioServer"
        if not isinstance(self.command, str) or not self.command.strip():
            raise ValueError(f"{kind}: command must be a non-empty string, got {self.command!r}")
        if isinstance(self.args, str) or not all(isinstance(a, str) for a in self.args):
            raise TypeError(f"{kind}: args must be a list of strings, got {self.args!r}")
        object.__setattr__(self, "args", tuple(self.args))
        _check_strings(kind, "env", self.env)
        _check_common(kind, self.name, self.lifetime, self.startup_timeout, self.tool_prefix)

    @property
    def label(self) -> str:
        """How messages name this server."""
        return self.name or " ".join([self.command, *self.args])[:120]


@dataclass(frozen=True, kw_only=True)
class MCPHTTPServer:
    """An MCP server already running, reached over streamable HTTP.

    Args:
        url: its MCP endpoint, e.g. ``"http://127.0.0.1:8000/mcp"``.
        headers: sent with every request (e.g. ``{"Authorization": "Bearer ..."}``).
        name: how errors and logs name it (default: the URL).
        lifetime: ``"shared"`` (default; one MCP session for the whole run) or ``"rollout"`` (a
            session per rollout attempt; what the server keeps per session is then the rollout's).
        startup_timeout: seconds to connect and answer the MCP handshake.
        tool_prefix: put before each of its tool names.
    """

    url: str
    headers: Mapping[str, str] | None = None
    name: str | None = None
    lifetime: Lifetime = "shared"
    startup_timeout: float = 30.0
    tool_prefix: str = ""

    def __post_init__(self) -> None:
        kind = "MCPHTTPServer"
        if not isinstance(self.url, str) or not re.match(r"^https?://[^/\s]+", self.url):
            raise ValueError(f"{kind}: url must be an http:// or https:// URL, got {self.url!r}")
        _check_strings(kind, "headers", self.headers)
        _check_common(kind, self.name, self.lifetime, self.startup_timeout, self.tool_prefix)

    @property
    def label(self) -> str:
        """How messages name this server."""
        return self.name or self.url


MCPServerConfig = MCPStdioServer | MCPHTTPServer


def check_servers(servers: Sequence[MCPServerConfig]) -> list[MCPServerConfig]:
    """The servers as a list; anything that is not a server config is a TypeError naming it."""
    if isinstance(servers, (MCPStdioServer, MCPHTTPServer)):
        servers = [servers]
    out = []
    for i, server in enumerate(servers):
        if not isinstance(server, (MCPStdioServer, MCPHTTPServer)):
            raise TypeError(
                f"mcp_servers[{i}] is a {type(server).__name__}; give vf.MCPStdioServer(command=..., args=[...]) "
                "or vf.MCPHTTPServer(url=...)"
            )
        out.append(server)
    return out
