"""Classic ToolEnv and StatefulToolEnv: Python functions offered to the model as tools.

The tools go to the model in the request's ``tools`` (OpenAI schemas from each function's
signature and docstring). After a model turn without tool calls the rollout stops
(``no_tools_called``); otherwise every call is answered with a tool message: the function's
result as text (content parts pass through), or ``error_formatter(exception)`` when its
arguments are not JSON or it raises — unless the exception's type is in ``stop_errors``, which
ends the rollout as an error. Metrics (weight 0): ``total_tool_calls`` and ``<tool>_calls`` for
each tool. :class:`StatefulToolEnv` hides ``args_to_skip`` from a tool's schema and fills them
in ``update_tool_args(tool_name, tool_args, messages, state)`` before each call.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

from verifiers_lite.classic.decorators import stop
from verifiers_lite.classic.errors import ToolCallError, ToolParseError
from verifiers_lite.classic.messages import classic_message
from verifiers_lite.classic.multiturn import MultiTurnEnv
from verifiers_lite.classic.rubric import Rubric
from verifiers_lite.classic.utils import maybe_await
from verifiers_lite.core.state import State
from verifiers_lite.tools.functions import function_to_schema


def _tool_name(tool: Any) -> str:
    return str(getattr(tool, "__name__", type(tool).__name__))


def _format_error(exc: Exception) -> str:
    return f"{exc}"


def _tool_content(result: Any) -> Any:
    """A tool's result as message content: text/image content parts as they are, else ``str``."""
    parts_ok = isinstance(result, list) and all(
        isinstance(p, dict) and p.get("type") in ("text", "image_url") for p in result
    )
    return result if parts_ok else str(result)


def _count_calls(completion: Any, name: str | None = None) -> int:
    total = 0
    for message in completion if isinstance(completion, list) else []:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            if name is None or function.get("name", call.get("name")) == name:
                total += 1
    return total


class ToolMonitorRubric(Rubric):
    """``total_tool_calls`` and one ``<tool>_calls`` metric per tool (weight 0)."""

    def __init__(self, tool_names: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tool_names = list(tool_names or [])
        self.add_metric(self.total_tool_calls)
        for name in self.tool_names:
            self.add_metric(self.get_tool_call_count_func(name))

    def add_tool_metric(self, tool_name: str) -> None:
        if tool_name not in self.tool_names:
            self.tool_names.append(tool_name)
            self.add_metric(self.get_tool_call_count_func(tool_name))

    def remove_tool_metric(self, tool_name: str) -> None:
        if tool_name in self.tool_names:
            self.tool_names.remove(tool_name)
            for i, func in enumerate(self.funcs):
                if getattr(func, "__name__", None) == f"{tool_name}_calls":
                    del self.funcs[i], self.weights[i]
                    break

    async def total_tool_calls(self, completion: Any) -> float:
        """The number of tool calls in the completion."""
        return float(_count_calls(completion))

    def get_tool_call_count_func(self, tool_name: str) -> Callable[..., Any]:
        async def tool_call_count_func(completion: Any) -> int:
            return _count_calls(completion, tool_name)

        tool_call_count_func.__name__ = f"{tool_name}_calls"
        tool_call_count_func.__qualname__ = f"ToolMonitorRubric.{tool_name}_calls"
        return tool_call_count_func


ToolRubric = ToolMonitorRubric


class ToolEnv(MultiTurnEnv):
    """``vf.ToolEnv(tools=[...], max_turns=10)`` (see the module)."""

    def __init__(
        self,
        tools: list[Callable[..., Any]] | None = None,
        max_turns: int = 10,
        error_formatter: Callable[[Exception], str] = _format_error,
        stop_errors: list[type[Exception]] | None = None,
        **kwargs: Any,
    ) -> None:
        self.tools = list(tools or [])
        self.error_formatter = error_formatter
        self.stop_errors = list(stop_errors or [])
        self.tool_map: dict[str, Callable[..., Any]] = {_tool_name(t): t for t in self.tools}
        schemas = [function_to_schema(t, _tool_name(t)) for t in self.tools]
        super().__init__(tool_defs=[s["function"] for s in schemas], max_turns=max_turns, **kwargs)
        self.tool_monitor_rubric = ToolMonitorRubric(tool_names=list(self.tool_map))
        self.add_rubric(self.tool_monitor_rubric)

    def _offer(self, schema: dict[str, Any]) -> None:
        self.tool_defs = [*(self.tool_defs or []), schema]

    def add_tool(self, tool: Callable[..., Any]) -> None:
        """Offer one more tool."""
        self.tools.append(tool)
        self.tool_map[_tool_name(tool)] = tool
        self._offer(function_to_schema(tool, _tool_name(tool)))
        self.tool_monitor_rubric.add_tool_metric(_tool_name(tool))

    def remove_tool(self, tool: Callable[..., Any]) -> None:
        """Stop offering a tool."""
        name = _tool_name(tool)
        self.tools.remove(tool)
        self.tool_map.pop(name, None)
        self.tool_defs = [d for d in self.tool_defs or [] if d["function"]["name"] != name]
        self.tool_monitor_rubric.remove_tool_metric(name)

    @stop
    async def no_tools_called(self, state: State) -> bool:
        if not state["trajectory"]:
            return False
        last = state["trajectory"][-1]["completion"][-1]
        return last.get("role") == "assistant" and not last.get("tool_calls")

    def _stops_on(self, exc: Exception) -> bool:
        return any(isinstance(exc, kind) for kind in self.stop_errors)

    async def call_tool(
        self, tool_name: str, tool_args: dict[str, Any], tool_call_id: str, **kwargs: Any
    ) -> Any:
        """Run one tool; its result as a tool message."""
        result = await maybe_await(self.tool_map[tool_name], **tool_args)
        return classic_message(
            {"role": "tool", "content": _tool_content(result), "tool_call_id": tool_call_id}
        )

    def _error_message(self, exc: Exception, call_id: str) -> Any:
        return classic_message(
            {"role": "tool", "content": self.error_formatter(exc), "tool_call_id": call_id}
        )

    def parse_tool_args(self, call: Any) -> dict[str, Any]:
        """The call's arguments as a dict (ToolParseError-worthy failures raise)."""
        return json.loads(call.arguments)

    async def prepare_tool_args(
        self, tool_name: str, tool_args: dict[str, Any], messages: Any, state: State
    ) -> dict[str, Any]:
        """Hook between parsing and calling (a stateful environment adds hidden arguments)."""
        return tool_args

    async def env_response(self, messages: Any, state: State, **kwargs: Any) -> Any:
        replies = []
        for call in messages[-1].tool_calls or []:
            try:
                name, args = call.name, self.parse_tool_args(call)
            except Exception as exc:
                if self._stops_on(exc):
                    raise ToolParseError(str(exc)) from exc
                replies.append(self._error_message(exc, call.id))
                continue
            args = await self.prepare_tool_args(name, args, messages, state)
            try:
                replies.append(await self.call_tool(name, args, call.id))
            except Exception as exc:
                if self._stops_on(exc):
                    raise ToolCallError(str(exc)) from exc
                replies.append(self._error_message(exc, call.id))
        return replies


def _hide_arguments(tool: Callable[..., Any], args_to_skip: list[str]) -> dict[str, Any]:
    """The tool's schema without ``args_to_skip`` (neither shown nor required)."""
    schema = function_to_schema(tool, _tool_name(tool))
    params = schema["function"]["parameters"]
    for arg in args_to_skip:
        params.get("properties", {}).pop(arg, None)
        if arg in params.get("required", []):
            params["required"].remove(arg)
    return schema


class StatefulToolEnv(ToolEnv):
    """``vf.StatefulToolEnv``: tools with arguments the environment fills from the state."""

    def __init__(
        self,
        tools: list[Callable[..., Any]] | None = None,
        max_turns: int = 10,
        error_formatter: Callable[[Exception], str] = _format_error,
        stop_errors: list[type[Exception]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            tools=tools,
            max_turns=max_turns,
            error_formatter=error_formatter,
            stop_errors=stop_errors,
            **kwargs,
        )
        self.skipped_args: dict[str, list[str]] = {}

    def add_tool(self, tool: Callable[..., Any], args_to_skip: list[str] | None = None) -> None:
        """Offer ``tool`` with ``args_to_skip`` hidden from the model (filled by update_tool_args)."""
        skipped = list(args_to_skip or [])
        self.tools.append(tool)
        self.tool_map[_tool_name(tool)] = tool
        self._offer(_hide_arguments(tool, skipped))
        self.skipped_args[_tool_name(tool)] = skipped
        self.tool_monitor_rubric.add_tool_metric(_tool_name(tool))

    def remove_tool(self, tool: Callable[..., Any]) -> None:
        super().remove_tool(tool)
        self.skipped_args.pop(_tool_name(tool), None)

    def update_tool_args(
        self, tool_name: str, tool_args: dict[str, Any], messages: Any, state: State, **kwargs: Any
    ) -> dict[str, Any]:
        """Return the arguments to call the tool with (and update ``state`` in place)."""
        raise NotImplementedError(f"{type(self).__name__} must define update_tool_args")

    def parse_tool_args(self, call: Any) -> dict[str, Any]:
        args = json.loads(call.arguments)
        if not isinstance(args, dict):
            raise ValueError(
                f"Expected tool arguments to be a dict, got {type(args).__name__}: {args}"
            )
        return args

    async def prepare_tool_args(
        self, tool_name: str, tool_args: dict[str, Any], messages: Any, state: State
    ) -> dict[str, Any]:
        result = self.update_tool_args(tool_name, tool_args, messages, state)
        return await result if inspect.isawaitable(result) else result
