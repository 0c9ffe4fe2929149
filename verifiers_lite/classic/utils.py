"""Classic helpers from ``verifiers.utils``: awaiting maybe-async calls, calling with the named
arguments a function takes, tool schemas from functions, environment keys, logging switches."""

from __future__ import annotations

import inspect
import logging
import os
import weakref
from collections.abc import Callable
from typing import Any

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.tools.functions import function_to_schema


async def maybe_await(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)``, awaited when it returns an awaitable."""
    result = func(*args, **kwargs)
    if inspect.isawaitable(result):
        return await result
    return result


# What each function takes by name, read once (a signature costs tens of microseconds, and
# classic environments call stop conditions and reward functions by name on every turn).
_ACCEPTS: weakref.WeakKeyDictionary[Any, frozenset[str] | None] = weakref.WeakKeyDictionary()


def accepted_names(func: Callable[..., Any]) -> frozenset[str] | None:
    """The names ``func`` takes (None with ``**kwargs``: all). Remembered per function; a bound
    method's under its function (so without ``self``, as every binding of it sees it)."""
    key = getattr(func, "__func__", func)
    try:
        if key in _ACCEPTS:
            return _ACCEPTS[key]
    except TypeError:  # not weakly referenceable: read it every time
        key = None
    params = inspect.signature(func).parameters
    names = (
        None
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        else frozenset(params)
    )
    if key is not None:
        _ACCEPTS[key] = names
    return names


def named_args(func: Callable[..., Any], objects: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``objects`` that ``func`` takes by name (all of them with ``**kwargs``)."""
    names = accepted_names(func)
    return objects if names is None else {k: v for k, v in objects.items() if k in names}


async def maybe_call_with_named_args(func: Callable[..., Any], **objects: Any) -> Any:
    """Call ``func`` with the entries of ``objects`` it takes by name, awaiting the result."""
    return await maybe_await(func, **named_args(func, objects))


def convert_func_to_oai_tool(func: Callable[..., Any]) -> dict[str, Any]:
    """The OpenAI tool schema of ``func`` (from its signature and docstring)."""
    return function_to_schema(func)


def convert_func_to_tool_def(func: Callable[..., Any]) -> dict[str, Any]:
    """A provider-neutral tool definition: ``{"name", "description", "parameters"}``."""
    return dict(function_to_schema(func)["function"])


class MissingKeyError(VerifiersError, ValueError):
    """Required environment variables are not set."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        super().__init__(f"Missing required environment variable(s): {', '.join(keys)}")


def ensure_keys(keys: list[str]) -> None:
    """Raise :class:`MissingKeyError` naming every variable of ``keys`` that is unset."""
    missing = [k for k in keys if not os.environ.get(k)]
    if missing:
        raise MissingKeyError(missing)


def setup_logging(level: str | None = None, *args: Any, **kwargs: Any) -> None:
    """Set the classic ``verifiers`` loggers' level (the environment's ``self.logger``)."""
    if level:
        logging.getLogger("verifiers").setLevel(level.upper())


def print_prompt_completions_sample(*args: Any, **kwargs: Any) -> None:
    """Classic display helper: prints nothing (results are shown by verifiers_lite's own views)."""
