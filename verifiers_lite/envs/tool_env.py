"""ToolEnv: the model calls Python functions and MCP servers' tools over several turns."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from verifiers_lite.core.messages import Messages
from verifiers_lite.core.records import ToolCallRecord
from verifiers_lite.core.state import State, elapsed_ms
from verifiers_lite.core.tracebacks import traceback_key
from verifiers_lite.envs.multi_turn_env import MultiTurnEnv
from verifiers_lite.tools.functions import answer_tool_call, tool_name, tool_schema

if TYPE_CHECKING:
    from verifiers_lite.tools.mcp import MCPServerConfig, MCPToolset


class ToolEnv(MultiTurnEnv):
    """Tools are sync or async Python functions (JSON schemas from signature and docstring)
    and the tools of MCP servers (``mcp_servers``: :class:`~verifiers_lite.MCPStdioServer`,
    :class:`~verifiers_lite.MCPHTTPServer`; their own schemas, listed when the environment is
    built). Unknown tools, bad arguments, exceptions and timeouts (``tool_timeout`` seconds)
    are answered to the model as tool messages, never raised; an MCP server that cannot start
    or stops answering fails the rollout (``env_error``). The rollout ends (``stop``) when the
    model answers without calling a tool. ``env_id`` names it in results (default: the class
    name).

    Args:
        tools: Python functions the model may call (sync or async); their schemas come from
            their signatures and docstrings.
        tool_timeout: seconds a tool call may take before the model is told it timed out.
        mcp_servers: MCP servers whose tools the model may call too.
    """

    def __init__(
        self,
        tools: list[Callable[..., Any]] | None = None,
        *args: Any,
        tool_timeout: float = 30.0,
        mcp_servers: Sequence[MCPServerConfig] | None = None,
        **kwargs: Any,
    ) -> None:
        self.tools: dict[str, Callable[..., Any]] = {}
        for fn in tools or []:
            if not callable(fn):
                raise TypeError(f"tool {fn!r} is not callable")
            self.tools[tool_name(fn)] = fn
        self.mcp: MCPToolset | None = None
        if mcp_servers:
            from verifiers_lite.tools.mcp import MCPToolset

            self.mcp = MCPToolset(mcp_servers, taken=list(self.tools))
            self.tools.update((tool.name, tool) for tool in self.mcp.tools)
        kwargs.setdefault("tool_defs", [tool_schema(fn) for fn in self.tools.values()])
        super().__init__(*args, **kwargs)
        self.tool_timeout = tool_timeout

    async def aclose(self) -> None:
        """Stop the shared MCP servers this environment started outside a run (``generate`` and
        ``evaluate`` stop theirs when the run ends); nothing to do without MCP servers."""
        if self.mcp is not None:
            await self.mcp.aclose()

    async def is_completed(self, messages: Messages, state: State) -> bool:
        last = messages[-1]
        if last.get("role") == "assistant" and not last.get("tool_calls"):
            state["stop_reason"] = "stop"
            return True
        return False

    async def env_response(self, messages: Messages, state: State) -> Messages:
        calls = messages[-1].get("tool_calls") or []
        answered = await asyncio.gather(
            *(self._answer(call, i, state) for i, call in enumerate(calls))
        )
        if state.get("trajectory"):  # each call's arguments, result and duration, on its step
            state["trajectory"][-1]["tool_calls"] = [record for _, record in answered]
        return [message for message, _ in answered]

    async def _answer(
        self, call: Any, index: int, state: State
    ) -> tuple[dict[str, Any], ToolCallRecord]:
        """One tool message per call, whatever the model wrote (malformed calls included), and
        the call's record."""
        call = call if isinstance(call, dict) else {}
        call_id = (
            call.get("id")
            if isinstance(call.get("id"), str) and call.get("id")
            else f"call_{index}"
        )
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        name = function.get("name")
        began, t0 = elapsed_ms(state), time.perf_counter()
        # Arguments go as the model wrote them: call_tool decodes them once (decoding here too
        # would turn the JSON string '"x"' into x and misreport it as invalid JSON).
        answer = await answer_tool_call(
            self.tools, name, function.get("arguments"), self.tool_timeout
        )
        record: ToolCallRecord = {
            "id": call_id,
            "name": name if isinstance(name, str) else None,
            "arguments": function.get("arguments"),
            "result": answer.content,
            "error": answer.error,
            "start_ms": began,
            "duration_ms": round((time.perf_counter() - t0) * 1000, 3),
        }
        if answer.traceback is not None:
            record["traceback"] = answer.traceback
            record["traceback_id"] = traceback_key(answer.traceback)
        return {"role": "tool", "tool_call_id": call_id, "content": answer.content}, record
