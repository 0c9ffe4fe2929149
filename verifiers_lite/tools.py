"""Plain Python functions as LLM tools: OpenAI schema from the signature, safe async calls.

Shared by ``ToolEnv`` and the token-level ``ToolManager`` so both describe and run tools the
same way.
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal

__all__ = [
    "ToolCallError",
    "call_tool",
    "function_to_schema",
    "parse_docstring",
    "tool_error_message",
]

_PRIMITIVES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


class ToolCallError(Exception):
    """A tool call that could not produce a result.

    ``kind`` is one of ``unknown_tool``, ``bad_arguments``, ``timeout``, ``exception``.
    """

    def __init__(self, kind: str, tool: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.tool = tool


def tool_error_message(err: ToolCallError) -> str:
    """The text a model sees in the tool message when a call failed."""
    return f"Error ({err.kind}) calling tool '{err.tool}': {err}"


def _type_schema(tp: Any) -> dict[str, Any]:
    """JSON schema for one annotation; unknown types fall back to an unconstrained schema."""
    if tp is inspect.Parameter.empty or tp is Any:
        return {}
    if tp in _PRIMITIVES:
        return {"type": _PRIMITIVES[tp]}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        non_null = [a for a in args if a is not type(None)]
        if len(non_null) == 1:
            # Optional[X]: the model may omit or pass null; describe X so it knows what to send.
            return _type_schema(non_null[0])
        return {"anyOf": [_type_schema(a) for a in args]}
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple, set, frozenset):
        schema: dict[str, Any] = {"type": "array"}
        if args and not (origin is tuple and len(args) > 1 and args[1] is not Ellipsis):
            schema["items"] = _type_schema(args[0])
        return schema
    if origin is dict or tp is dict:
        return {"type": "object"}
    return {}


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google/numpy-ish docstring into (description, {param: description})."""
    if not doc:
        return "", {}
    doc = inspect.cleandoc(doc)
    lines = doc.splitlines()
    desc_lines: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        header = stripped.rstrip(":").lower()
        if stripped.endswith(":") and header in {"args", "arguments", "parameters", "params"}:
            section, current = "args", None
            continue
        if stripped.endswith(":") and header in {
            "returns",
            "return",
            "raises",
            "yields",
            "examples",
            "example",
            "note",
            "notes",
        }:
            section, current = "other", None
            continue
        if section is None:
            desc_lines.append(line)
        elif section == "args":
            if re.fullmatch(r"-+", stripped):
                continue
            m = re.match(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", stripped)
            if m and not line.startswith((" " * 8, "\t\t")):
                current = m.group(1).lstrip("*")
                params[current] = m.group(2).strip()
            elif current and stripped:
                params[current] = (params[current] + " " + stripped).strip()
    description = "\n".join(desc_lines).strip()
    # Only the first paragraph: the rest is usually detail a model does not need.
    description = description.split("\n\n")[0].replace("\n", " ").strip()
    return description, params


def function_to_schema(fn: Callable[..., Any], name: str | None = None) -> dict[str, Any]:
    """OpenAI tool schema (``{"type": "function", "function": {...}}``) for a Python function.

    Parameter types come from annotations, descriptions from the docstring's ``Args:`` section;
    parameters without defaults are required. ``*args``/``**kwargs`` are not exposed.
    """
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # unresolvable forward refs: fall back to raw annotations
        hints = {}
    description, param_docs = parse_docstring(inspect.getdoc(fn))
    properties: dict[str, Any] = {}
    required: list[str] = []
    for pname, param in sig.parameters.items():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        prop = dict(_type_schema(hints.get(pname, param.annotation)))
        if pname in param_docs and param_docs[pname]:
            prop["description"] = param_docs[pname]
        if param.default is inspect.Parameter.empty:
            required.append(pname)
        elif isinstance(param.default, enum.Enum):
            prop["default"] = param.default.value
        elif isinstance(param.default, (str, int, float, bool)) or param.default is None:
            prop["default"] = param.default
        properties[pname] = prop
    return {
        "type": "function",
        "function": {
            "name": name or fn.__name__,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def _to_text(result: Any) -> str:
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(result)


async def call_tool(
    fn: Callable[..., Any],
    args: dict[str, Any] | str | None,
    timeout: float | None = None,
    *,
    raise_errors: bool = False,
    name: str | None = None,
) -> str:
    """Call ``fn(**args)`` and return its result as text.

    Coroutine functions are awaited; plain functions run in a worker thread so a slow tool does
    not block the event loop (a timed-out thread cannot be killed, only abandoned). ``args`` may
    be a dict or a JSON object string. Failures (bad arguments, timeout, exception) come back as
    an error text for the model, or as :class:`ToolCallError` when ``raise_errors`` is true.
    """
    tool = name or str(getattr(fn, "__name__", "tool"))
    try:
        return _to_text(await _call(fn, args, timeout, tool))
    except ToolCallError as err:
        if raise_errors:
            raise
        return tool_error_message(err)


async def _call(fn: Callable[..., Any], args: Any, timeout: float | None, tool: str) -> Any:
    if args is None or (isinstance(args, str) and not args.strip()):
        args = {}  # no-argument calls arrive as null, "" or whitespace
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError as e:
            raise ToolCallError("bad_arguments", tool, f"arguments are not valid JSON: {e}") from e
    if not isinstance(args, dict):
        raise ToolCallError(
            "bad_arguments", tool, f"arguments must be a JSON object, got {type(args).__name__}"
        )
    try:
        inspect.signature(fn).bind(**args)
    except TypeError as e:
        raise ToolCallError("bad_arguments", tool, str(e)) from e
    coro = fn(**args) if inspect.iscoroutinefunction(fn) else asyncio.to_thread(fn, **args)
    try:
        result = await asyncio.wait_for(coro, timeout)
        if inspect.isawaitable(result):  # a sync wrapper returning a coroutine
            result = await asyncio.wait_for(result, timeout)
        return result
    except TimeoutError as e:
        raise ToolCallError("timeout", tool, f"timed out after {timeout} s") from e
    except ToolCallError:
        raise
    except Exception as e:
        raise ToolCallError("exception", tool, f"{type(e).__name__}: {e}") from e
