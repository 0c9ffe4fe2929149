"""Helpers for the MCP tool tests: the example server's configs, finding its processes."""

from __future__ import annotations

import uuid
from typing import Any

import psutil
from verifiers_lite_envs._mcp_server import stdio_server

from verifiers_lite.tools.mcp import Lifetime, MCPStdioServer


def tagged_server(
    tag: str, *, lifetime: Lifetime = "shared", faults: bool = True
) -> MCPStdioServer:
    """The example server over stdio, its processes marked by ``tag`` on their command line."""
    return stdio_server(faults=faults, lifetime=lifetime, extra_args=("--tag", tag))


def new_tag() -> str:
    return uuid.uuid4().hex


def server_processes(*, tag: str | None = None, cwd: str | None = None) -> list[psutil.Process]:
    """Live (not zombie) example-server processes with ``tag`` in their command line, or whose
    working directory is ``cwd``."""
    found = []
    for proc in psutil.process_iter(["cmdline", "cwd", "status"]):
        info: dict[str, Any] = proc.info
        cmdline = info.get("cmdline") or []
        if (
            "verifiers_lite_envs._mcp_server" not in cmdline
            or info.get("status") == psutil.STATUS_ZOMBIE
        ):
            continue
        if (tag is not None and tag in cmdline) or (cwd is not None and info.get("cwd") == cwd):
            found.append(proc)
    return found


def tool_texts(row: Any) -> list[str]:
    """The tool messages' texts of a row, in order."""
    return [m["content"] for m in row["completion"] if m["role"] == "tool"]
