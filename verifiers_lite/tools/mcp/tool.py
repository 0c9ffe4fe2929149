"""One MCP server's tool as a model sees it: its JSON schema, its calls, its results as text.

Errors follow the Python tools' model (:mod:`verifiers_lite.tools.functions`): arguments that do not fit
the tool's JSON schema are ``bad_arguments``, a result the server marks as an error (the tool
raised) is ``exception``, a call past the environment's tool timeout is ``timeout``; all are
answered to the model. A server that cannot be started or stops answering mid-call is a
:class:`~verifiers_lite.core.errors.ToolServerError`: the rollout's row gets ``env_error``.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from verifiers_lite.core.errors import ToolServerError
from verifiers_lite.tools.functions import SchemaTool, ToolCallFailed

from .connection import MCPConnection, exception_text
from .lifetime import ServerHandle

if TYPE_CHECKING:
    from mcp.types import CallToolResult, Tool

__all__ = ["MCPTool", "result_text"]


class MCPTool(SchemaTool):
    """A tool of an MCP server, offered under ``server's tool_prefix + its name``."""

    def __init__(self, server: ServerHandle, spec: Tool) -> None:
        self.server = server
        self.remote_name = spec.name
        self.name = server.config.tool_prefix + spec.name
        parameters = dict(spec.input_schema or {})
        parameters.setdefault("type", "object")
        parameters.setdefault("properties", {})
        self.schema = {
            "type": "function",
            "function": {
                "name": self.name,
                "description": spec.description or "",
                "parameters": parameters,
            },
        }
        # built on first use (and again after pickling: it does not pickle)
        self._validator: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_validator": None}

    def check_arguments(self, arguments: dict[str, Any]) -> None:
        """:class:`ToolCallFailed` ``bad_arguments`` naming every argument that does not fit."""
        try:
            if self._validator is None:
                import jsonschema

                parameters = self.schema["function"]["parameters"]
                self._validator = jsonschema.validators.validator_for(parameters)(parameters)
            errors = sorted(self._validator.iter_errors(arguments), key=lambda e: list(e.path))
        except Exception:  # a schema the validator cannot apply: the server checks the arguments
            return
        if errors:
            problems = "; ".join(
                f"{'.'.join(map(str, e.path)) or 'arguments'}: {e.message}"[:200] for e in errors
            )
            raise ToolCallFailed("bad_arguments", self.name, f"invalid arguments: {problems}")

    async def invoke(self, arguments: dict[str, Any], timeout: float | None) -> str:
        self.check_arguments(arguments)
        conn = await self.server.connection()
        try:
            result = await asyncio.wait_for(conn.call_tool(self.remote_name, arguments), timeout)
        except TimeoutError as exc:
            raise ToolCallFailed("timeout", self.name, f"timed out after {timeout} s") from exc
        except ToolServerError:
            raise
        except Exception as exc:
            raise self._failure(conn, exc) from exc
        text = result_text(result)
        if result.is_error:
            raise ToolCallFailed("exception", self.name, text or "the tool reported an error")
        return text

    def _failure(self, conn: MCPConnection, exc: Exception) -> Exception:
        """A JSON-RPC error from a live server is the call's; anything else lost the server."""
        from mcp import MCPError
        from mcp.types import CONNECTION_CLOSED, INVALID_PARAMS

        if isinstance(exc, MCPError) and exc.code != CONNECTION_CLOSED:
            kind = "bad_arguments" if exc.code == INVALID_PARAMS else "exception"
            return ToolCallFailed(kind, self.name, f"the MCP server refused the call: {exc}")
        conn.lost = conn.lost or exception_text(exc)
        return ToolServerError(
            conn.describe(
                f"stopped answering during the call to '{self.remote_name}' ({exception_text(exc)}): "
                "it exited, crashed or closed the connection"
            )
        )


def result_text(result: CallToolResult) -> str:
    """A tool result as the tool message's text: its text blocks, one per line; other blocks
    as a short note; the structured content (JSON) when there is no text."""
    parts = [_block_text(block) for block in result.content]
    parts = [p for p in parts if p]
    if not parts and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False, default=str)
    return "\n".join(parts)


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} {getattr(block, 'mime_type', '')}, {len(getattr(block, 'data', '')) * 3 // 4} bytes]"
    if kind == "resource_link":
        return f"[resource {block.uri}]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        return str(text) if text is not None else f"[resource {resource.uri}]"
    return f"[{kind or type(block).__name__} content]"
