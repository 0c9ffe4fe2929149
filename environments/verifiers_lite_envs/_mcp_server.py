"""A small MCP server (the ``mcp`` SDK's ``MCPServer``) with deterministic tools.

``calculator`` and ``add`` compute; ``kv_set``, ``kv_get`` and ``kv_incr`` keep a key-value
store in the server process, so what one rollout stored is visible to the next only when they
share the server (``lifetime="shared"``). With ``--faults`` it also offers ``fail`` (the tool
raises), ``hang`` (the tool never answers) and ``crash`` (the process exits mid-call).

Run it over stdio (``python -m verifiers_lite_envs._mcp_server``) or over streamable HTTP on
the loopback (``--http --port P``; ``--require-header 'Name: value'`` refuses requests without
that header, with 401). :func:`stdio_server` and :func:`http_server` are its configs.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from verifiers_lite.tools.mcp import Lifetime, MCPHTTPServer, MCPStdioServer

from .calculator import calculator as _calculate

__all__ = ["build_server", "http_server", "main", "stdio_server"]


def build_server(faults: bool = False) -> Any:
    """The MCP server object with its tools (``faults``: the failing ones too)."""
    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("verifiers-lite-example", log_level="WARNING")
    store: dict[str, str] = {}

    @server.tool()
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression such as "(12 + 7) * 3"."""
        return _calculate(expression)

    @server.tool()
    def add(a: int, b: int) -> int:
        """The sum of two integers."""
        return a + b

    @server.tool()
    def kv_set(key: str, value: str) -> str:
        """Store ``value`` under ``key`` (in this server process)."""
        store[key] = value
        return f"stored {key}"

    @server.tool()
    def kv_get(key: str) -> str:
        """The value stored under ``key``, or "(missing)"."""
        return store.get(key, "(missing)")

    @server.tool()
    def kv_incr(key: str) -> int:
        """Add 1 to the integer under ``key`` (0 when missing) and return the new value."""
        store[key] = str(int(store.get(key, "0")) + 1)
        return int(store[key])

    if faults:

        @server.tool()
        def fail(message: str) -> str:
            """Fail with ``message`` (the error the model reads)."""
            raise ToolError(message)

        @server.tool()
        async def hang(seconds: float = 3600.0) -> str:
            """Wait ``seconds`` before answering."""
            await anyio.sleep(seconds)
            return "done"

        @server.tool()
        def crash(code: int = 3) -> str:
            """Exit the server process at once with ``code``."""
            print(f"crashing on request (exit code {code})", file=sys.stderr, flush=True)
            os._exit(code)

    return server


def _pythonpath() -> str:
    """This library's and this package's directories, so the server imports the same code."""
    import verifiers_lite

    dirs = [
        str(Path(verifiers_lite.__file__).resolve().parents[1]),
        str(Path(__file__).resolve().parents[1]),
    ]
    return os.pathsep.join(dict.fromkeys(dirs))


def stdio_server(
    *,
    faults: bool = False,
    lifetime: Lifetime = "shared",
    name: str = "example",
    extra_args: tuple[str, ...] = (),
) -> MCPStdioServer:
    """The config that starts this server over stdio with this Python."""
    args = ["-m", "verifiers_lite_envs._mcp_server", *(["--faults"] if faults else []), *extra_args]
    return MCPStdioServer(
        command=sys.executable,
        args=args,
        env={"PYTHONPATH": _pythonpath()},
        name=name,
        lifetime=lifetime,
    )


def http_server(
    port: int,
    *,
    headers: dict[str, str] | None = None,
    lifetime: Lifetime = "shared",
    name: str = "example-http",
) -> MCPHTTPServer:
    """The config that reaches this server run with ``--http --port PORT`` on 127.0.0.1."""
    return MCPHTTPServer(
        url=f"http://127.0.0.1:{port}/mcp", headers=headers, name=name, lifetime=lifetime
    )


def _require_header(app: Any, header: str) -> Any:
    """``app`` answering 401 to any request without ``header`` (``Name: value``)."""
    name, _, value = header.partition(":")
    key, expected = name.strip().lower().encode(), value.strip().encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope.get("headers") or []).get(key) != expected:
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"text/plain")],
                }
            )
            await send({"type": "http.response.body", "body": b"missing or wrong header"})
            return
        await app(scope, receive, send)

    return guarded


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="example MCP server (stdio, or HTTP on 127.0.0.1)")
    parser.add_argument("--faults", action="store_true", help="also offer fail, hang and crash")
    parser.add_argument(
        "--http", action="store_true", help="serve streamable HTTP instead of stdio"
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--require-header", default=None, help="'Name: value' every HTTP request must carry"
    )
    parser.add_argument(
        "--tag", default=None, help="ignored: marks the process (tests find it by it)"
    )
    args = parser.parse_args(argv)
    server = build_server(faults=args.faults)
    if not args.http:
        server.run("stdio")
        return
    import uvicorn

    app = server.streamable_http_app()
    if args.require_header:
        app = _require_header(app, args.require_header)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
