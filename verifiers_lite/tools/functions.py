"""Plain Python functions as LLM tools: OpenAI schema from the signature, safe async calls.

Shared by ``ToolEnv`` and the token-level ``ToolManager`` so both describe and run tools the
same way. pydantic builds the parameter schema from the signature and validates the model's
arguments against it; ``docstring_parser`` reads Google, NumPy and reST docstrings.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import typing
import warnings
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, NamedTuple

import docstring_parser
import pydantic

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.core.tracebacks import user_traceback

__all__ = [
    "SchemaTool",
    "ToolAnswer",
    "ToolCallFailed",
    "answer_tool_call",
    "call_tool",
    "function_to_schema",
    "parse_docstring",
    "tool_error_message",
]


class ToolCallFailed(VerifiersError):
    """A tool call that could not produce a result (the model is told why; the rollout goes
    on). Classic environments' ``vf.ToolCallError`` is theirs, raised to stop a rollout.

    ``kind`` is one of ``parse_error``, ``unknown_tool``, ``bad_arguments``, ``timeout``,
    ``exception``.
    """

    def __init__(self, kind: str, tool: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.tool = tool


class SchemaTool:
    """A tool that brings its own JSON schema (an MCP server's tool) instead of a Python
    signature: called with the model's decoded arguments, it checks them itself.

    :meth:`invoke` answers with the result text, raises :class:`ToolCallFailed` for what the
    model is told (bad arguments, a tool error, a timeout) and any other exception for a
    failure the rollout cannot go on from (recorded on its row with the exception's
    ``category``)."""

    name: str
    schema: dict[str, Any]  #: the OpenAI tool definition (``{"type": "function", ...}``)

    async def invoke(self, arguments: dict[str, Any], timeout: float | None) -> str:
        raise NotImplementedError

    async def __call__(self, **arguments: Any) -> str:
        """Call the tool as a function (no timeout)."""
        return await self.invoke(arguments, None)


def tool_schema(tool: Callable[..., Any]) -> dict[str, Any]:
    """The OpenAI definition of a tool: a :class:`SchemaTool`'s own, a function's from its
    signature and docstring."""
    return tool.schema if isinstance(tool, SchemaTool) else function_to_schema(tool)


def tool_name(tool: Callable[..., Any]) -> str:
    """The name a tool is offered under."""
    return tool.name if isinstance(tool, SchemaTool) else str(tool.__name__)


def tool_error_message(err: ToolCallFailed) -> str:
    """The text a model sees in the tool message when a call failed."""
    return f"Error ({err.kind}) calling tool '{err.tool}': {err}"


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(first paragraph of the description, {param: description}) of a Google, NumPy or reST
    docstring; whitespace inside each text is collapsed to single spaces."""
    if not doc or not doc.strip():
        return "", {}
    text = inspect.cleandoc(doc)
    try:
        parsed = docstring_parser.parse(text)
    except docstring_parser.ParseError:  # a malformed section: keep the description only
        return _one_line(text.split("\n\n")[0]), {}
    description = parsed.short_description or ""
    if parsed.long_description and not parsed.blank_after_short_description:
        # The first paragraph ran on past its first line.
        description += " " + parsed.long_description.split("\n\n")[0]
    params = {p.arg_name.lstrip("*"): _one_line(p.description) for p in parsed.params}
    return _one_line(description), params


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


@dataclass(frozen=True, slots=True)
class _Signature:
    """A function's arguments as a pydantic model (fields are aliased to the parameter names,
    so names such as ``json`` or ``_x`` cannot clash with pydantic's own)."""

    model: type[pydantic.BaseModel]
    fields: dict[str, str]  # field name -> parameter name
    takes_kwargs: bool


# Built once per function. A bound method is a new object at every attribute access, so methods
# are cached under their function (their signature, without ``self``, is the same for every instance).
_signatures: weakref.WeakKeyDictionary[Any, _Signature] = weakref.WeakKeyDictionary()
_method_signatures: weakref.WeakKeyDictionary[Any, _Signature] = weakref.WeakKeyDictionary()


def _signature(fn: Callable[..., Any]) -> _Signature:
    cache, key = (_method_signatures, fn.__func__) if inspect.ismethod(fn) else (_signatures, fn)
    try:
        return cache[key]
    except (KeyError, TypeError):
        pass
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # one unresolvable forward ref: resolve the others one by one
        hints = {n: _resolve(fn, p.annotation) for n, p in sig.parameters.items()}
    fields: dict[str, Any] = {}
    names: dict[str, str] = {}
    takes_kwargs = False
    for i, (pname, param) in enumerate(sig.parameters.items()):
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            takes_kwargs = True
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        annotation = _describable(hints.get(pname, Any))
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[f"p{i}"] = (Annotated[annotation, pydantic.Field(alias=pname)], default)
        names[f"p{i}"] = pname
    config = pydantic.ConfigDict(
        extra="allow" if takes_kwargs else "forbid", arbitrary_types_allowed=True
    )
    model = pydantic.create_model(
        f"{getattr(fn, '__name__', 'tool')}_args", __config__=config, **fields
    )
    spec = _Signature(model, names, takes_kwargs)
    with contextlib.suppress(TypeError):  # not weak-referenceable (a builtin): rebuilt per call
        cache[key] = spec
    return spec


def _resolve(fn: Callable[..., Any], annotation: Any) -> Any:
    """A string annotation evaluated in the function's module, or ``Any`` if it cannot be."""
    if annotation is inspect.Parameter.empty:
        return Any
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, getattr(fn, "__globals__", {}))  # what get_type_hints does
    except Exception:
        return Any


def _describable(annotation: Any) -> Any:
    """The annotation if pydantic can validate and describe it, else ``Any`` (no constraint)."""
    try:
        pydantic.TypeAdapter(annotation).json_schema()
    except Exception:
        return Any
    return annotation


def function_to_schema(fn: Callable[..., Any], name: str | None = None) -> dict[str, Any]:
    """OpenAI tool schema (``{"type": "function", "function": {...}}``) for a Python function.

    Parameter types come from annotations, descriptions from the docstring; parameters without
    defaults are required. ``*args``/``**kwargs`` are not exposed.
    """
    spec = _signature(fn)
    description, param_docs = parse_docstring(inspect.getdoc(fn))
    with warnings.catch_warnings():  # a default that is not JSON is simply left out
        warnings.simplefilter("ignore", pydantic.json_schema.PydanticJsonSchemaWarning)
        raw = spec.model.model_json_schema(by_alias=True)
    defs = raw.get("$defs", {})
    properties: dict[str, Any] = {}
    for pname, prop in raw.get("properties", {}).items():
        prop = _clean(_inline(prop, defs, ()))
        any_of = prop.get("anyOf")
        if "default" in prop and prop["default"] is None and isinstance(any_of, list):
            # Optional[X] = None: the model may omit it; describe X so it knows what to send.
            non_null = [s for s in any_of if s != {"type": "null"}]
            if len(non_null) == 1:
                prop = {**{k: v for k, v in prop.items() if k != "anyOf"}, **non_null[0]}
        if param_docs.get(pname):
            prop["description"] = param_docs[pname]
        properties[pname] = prop
    return {
        "type": "function",
        "function": {
            "name": name or fn.__name__,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": raw.get("required", []),
            },
        },
    }


def _inline(schema: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    """``schema`` with ``$ref``s to ``$defs`` replaced by their targets (a recursive type's
    inner reference becomes an unconstrained schema: tool calls need no infinite nesting)."""
    if isinstance(schema, list):
        return [_inline(s, defs, seen) for s in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        key = ref.removeprefix("#/$defs/")
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        target = {} if key in seen else _inline(defs.get(key, {}), defs, (*seen, key))
        return {**target, **rest}
    return {k: _inline(v, defs, seen) for k, v in schema.items()}


def _clean(schema: Any) -> Any:
    """Drop pydantic's generated ``title``s (noise in a prompt), keeping property names."""
    if isinstance(schema, list):
        return [_clean(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _clean(sub) for name, sub in value.items()}
        else:
            out[key] = _clean(value)
    return out


def validate_arguments(fn: Callable[..., Any], args: dict[str, Any], tool: str) -> dict[str, Any]:
    """The keyword arguments for ``fn``: the model's values checked and converted to the
    annotated types (``"3"`` for an ``int`` becomes 3, an enum value its member). Raises
    :class:`ToolCallFailed` ``bad_arguments`` naming every wrong, missing or unknown argument."""
    spec = _signature(fn)
    try:
        validated = spec.model.model_validate(args)
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {_problem(err)}"
            for err in exc.errors()
        )
        raise ToolCallFailed("bad_arguments", tool, f"invalid arguments: {problems}") from exc
    # Only what the model sent: the function's own defaults apply to the rest.
    given = validated.model_fields_set
    kwargs = {
        pname: getattr(validated, field) for field, pname in spec.fields.items() if field in given
    }
    if spec.takes_kwargs:
        kwargs.update(validated.model_extra or {})
    return kwargs


def _problem(err: Any) -> str:
    if err["type"] == "extra_forbidden":
        return "unexpected argument"
    if err["type"] == "missing":
        return "missing required argument"
    return f"{err['msg']} (got {err['input']!r})"[:200]


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
    an error text for the model, or as :class:`ToolCallFailed` when ``raise_errors`` is true.
    """
    tool = name or str(getattr(fn, "__name__", "tool"))
    try:
        return _to_text(await _call(fn, args, timeout, tool))
    except ToolCallFailed as err:
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
            raise ToolCallFailed("bad_arguments", tool, f"arguments are not valid JSON: {e}") from e
    if not isinstance(args, dict):
        raise ToolCallFailed(
            "bad_arguments", tool, f"arguments must be a JSON object, got {type(args).__name__}"
        )
    if isinstance(fn, SchemaTool):
        return await fn.invoke(args, timeout)  # its own checks and error kinds
    args = validate_arguments(fn, args, tool)
    coro = fn(**args) if inspect.iscoroutinefunction(fn) else asyncio.to_thread(fn, **args)
    try:
        result = await asyncio.wait_for(coro, timeout)
        if inspect.isawaitable(result):  # a sync wrapper returning a coroutine
            result = await asyncio.wait_for(result, timeout)
        return result
    except TimeoutError as e:
        raise ToolCallFailed("timeout", tool, f"timed out after {timeout} s") from e
    except ToolCallFailed:
        raise
    except Exception as e:
        raise ToolCallFailed("exception", tool, f"{type(e).__name__}: {e}") from e


class ToolAnswer(NamedTuple):
    """The answer to one tool call."""

    content: str  #: the text the model is sent
    error: str | None = None  #: the failure's kind (:class:`ToolCallFailed`), None when it ran
    #: where the tool's own code raised (the author's frames, the library's folded), when it did
    traceback: str | None = None


async def answer_tool_call(
    tools: Mapping[str, Callable[..., Any]],
    name: Any,
    arguments: Any,
    timeout: float | None = None,
    *,
    parse_error: str | None = None,
) -> ToolAnswer:
    """The answer to one tool call: its text, its error kind and, when the tool raised, the
    exception's stack from the author's frames.

    Whatever the model wrote is answered, never raised: call text that could not be parsed
    (``parse_error``), an unknown tool, bad arguments, a timeout or an exception in the tool
    come back as :func:`tool_error_message` text."""
    tool = name if isinstance(name, str) and name else "invalid_tool_call"
    try:
        if parse_error is not None:
            raise ToolCallFailed("parse_error", tool, f"could not parse tool call: {parse_error}")
        fn = tools.get(tool)
        if fn is None:
            raise ToolCallFailed(
                "unknown_tool", tool, f"no such tool; available: {', '.join(tools) or 'none'}"
            )
        return ToolAnswer(await call_tool(fn, arguments, timeout, raise_errors=True, name=tool))
    except ToolCallFailed as err:
        # Only an exception of the tool's own code has frames of the author's to show.
        raised = err.__cause__ if err.kind == "exception" else None
        return ToolAnswer(
            tool_error_message(err), err.kind, user_traceback(raised) if raised else None
        )


def __getattr__(name: str) -> Any:
    # The old name of ToolCallFailed answers for one more release (it read like classic
    # environments' ToolCallError, a different exception).
    if name == "ToolCallError":
        import warnings

        warnings.warn(
            f"{__name__}.ToolCallError was renamed ToolCallFailed; the old name is removed in "
            "the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return ToolCallFailed
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
