"""``ToolManager``: registers Python tools, parses tool calls out of model text, dispatches them."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from verifiers_lite._util.sync import run_sync
from verifiers_lite.tools.functions import answer_tool_call, function_to_schema, tool_schema

if TYPE_CHECKING:
    from verifiers_lite.tools.mcp import MCPServerConfig, MCPToolset

__all__ = ["HermesToolParser", "ParsedToolCall", "ToolManager"]


@dataclass(slots=True)
class ParsedToolCall:
    """One tool call found in model output; ``error`` is set when its text was malformed."""

    id: str
    name: str
    arguments: str  # JSON text (or the raw malformed text when ``error`` is set)
    error: str | None = None

    def to_openai(self) -> dict[str, Any]:
        """OpenAI ``tool_calls`` entry."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(slots=True)
class ParseResult:
    """Tool calls in a text, plus the text outside them."""

    calls: list[ParsedToolCall] = field(default_factory=list)
    content: str = ""

    @property
    def errors(self) -> list[str]:
        return [c.error for c in self.calls if c.error]


class HermesToolParser:
    """Hermes/Qwen format: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``.

    A block whose JSON is malformed, or an opening tag never closed, becomes a call with
    ``error`` set (name ``invalid_tool_call`` if none can be read) so it is answered, not lost.
    """

    open_tag = "<tool_call>"
    close_tag = "</tool_call>"
    _block = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
    _name = re.compile(r'"name"\s*:\s*"([^"]+)"')

    def parse(self, text: str, id_prefix: str | None = None) -> ParseResult:
        prefix = id_prefix if id_prefix is not None else f"call_{uuid.uuid4().hex[:12]}_"
        result = ParseResult(content=text.split(self.open_tag, 1)[0].strip())
        for i, m in enumerate(self._block.finditer(text)):
            body = m.group(1).strip()
            call_id = f"{prefix}{i}"
            closed = m.group(0).endswith(self.close_tag)
            try:
                if not closed:
                    raise ValueError("unclosed <tool_call> tag")
                obj = json.loads(body)
                if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
                    raise ValueError('expected {"name": str, "arguments": object}')
                args = obj.get("arguments", obj.get("parameters", {}))
                if isinstance(args, str):  # some models double-encode the arguments
                    args = json.loads(args)
                if not isinstance(args, dict):
                    raise ValueError("arguments must be a JSON object")
                result.calls.append(
                    ParsedToolCall(call_id, obj["name"], json.dumps(args, ensure_ascii=False))
                )
            except (ValueError, json.JSONDecodeError) as e:
                nm = self._name.search(body)
                result.calls.append(
                    ParsedToolCall(
                        call_id,
                        nm.group(1) if nm else "invalid_tool_call",
                        body,
                        f"parse_error: {e}",
                    )
                )
        return result


class ToolManager:
    """Python tools and MCP servers' tools a model may call, described to it as OpenAI
    function schemas (``mcp_servers``: as for :class:`~verifiers_lite.ToolEnv`).

    Every call is answered by one tool message carrying its ``tool_call_id``: unknown tools,
    bad arguments, exceptions, timeouts and malformed call text become error messages. Shared
    MCP servers used outside an environment's run (``MultiTurnRollout``) run until
    :meth:`close`.
    """

    def __init__(
        self,
        tools: Sequence[Callable[..., Any]] = (),
        parser: HermesToolParser | None = None,
        timeout: float | None = 30.0,
        mcp_servers: Sequence[MCPServerConfig] | None = None,
    ) -> None:
        self.parser = parser or HermesToolParser()
        self.timeout = timeout
        self._fns: dict[str, Callable[..., Any]] = {}
        self._schemas: dict[str, dict[str, Any]] = {}
        for fn in tools:
            self.register(fn)
        self.mcp: MCPToolset | None = None
        if mcp_servers:
            from verifiers_lite.tools.mcp import MCPToolset

            self.mcp = MCPToolset(mcp_servers, taken=self.names)
            for tool in self.mcp.tools:
                self.register(tool)

    async def aclose(self) -> None:
        """Stop the shared MCP servers started outside an environment's run."""
        if self.mcp is not None:
            await self.mcp.aclose()

    def close(self) -> None:
        """Sync twin of :meth:`aclose`."""
        run_sync(self.aclose())

    def register(
        self, fn: Callable[..., Any], name: str | None = None, schema: dict[str, Any] | None = None
    ) -> Callable[..., Any]:
        """Add a tool (usable as a decorator). The schema defaults to one built from ``fn``
        (an MCP tool's own)."""
        if schema is None:
            schema = tool_schema(fn) if name is None else function_to_schema(fn, name=name)
        tool_name = schema["function"]["name"]
        self._fns[tool_name] = fn
        self._schemas[tool_name] = schema
        return fn

    @property
    def names(self) -> list[str]:
        return list(self._fns)

    @property
    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI tool definitions, in registration order."""
        return list(self._schemas.values())

    def parse(self, text: str, id_prefix: str | None = None) -> ParseResult:
        """Tool calls in ``text`` (ids ``{id_prefix}{i}``; random prefix when not given)."""
        return self.parser.parse(text, id_prefix)

    async def call_async(self, call: ParsedToolCall) -> dict[str, Any]:
        """Run one call; the tool message answering it (errors included: the failure's kind
        under ``error``, where the tool's code raised under ``traceback``)."""
        answer = await answer_tool_call(
            self._fns, call.name, call.arguments, self.timeout, parse_error=call.error
        )
        msg: dict[str, Any] = {
            "role": "tool",
            "tool_call_id": call.id,
            "name": call.name,
            "content": answer.content,
        }
        if answer.error:
            msg["error"] = answer.error
        if answer.traceback is not None:
            msg["traceback"] = answer.traceback
        return msg

    async def dispatch_async(self, calls: Sequence[ParsedToolCall]) -> list[dict[str, Any]]:
        """Run calls concurrently; tool messages in call order."""
        return list(await asyncio.gather(*(self.call_async(c) for c in calls)))

    def dispatch(self, calls: Sequence[ParsedToolCall]) -> list[dict[str, Any]]:
        """Sync twin of :meth:`dispatch_async`."""
        return run_sync(self.dispatch_async(calls))
