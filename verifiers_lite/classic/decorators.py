"""Classic decorators: ``@vf.stop``, ``@vf.cleanup``, ``@vf.teardown`` (and ``@vf.setup``) mark
methods an environment finds on itself, run in priority order (higher first, then by name)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def _marker(kind: str) -> Callable[..., Any]:
    def decorate(func: F | None = None, priority: int = 0, **options: Any) -> Any:
        def mark(f: F) -> F:
            setattr(f, kind, True)
            setattr(f, f"{kind}_priority", priority)
            for key, value in options.items():
                setattr(f, f"{kind}_{key}", value)
            return f

        return mark if func is None else mark(func)

    decorate.__name__ = kind
    decorate.__doc__ = (
        f"Mark a method as a {kind} handler: ``@vf.{kind}`` or ``@vf.{kind}(priority=10)``."
    )
    return decorate


stop = _marker("stop")
cleanup = _marker("cleanup")
teardown = _marker("teardown")
setup = _marker("setup")


def discover_decorated(obj: Any, kind: str) -> list[Callable[..., Any]]:
    """The bound methods of ``obj`` marked ``kind``, by descending priority, then name (found on
    its class without evaluating any property)."""
    found = []
    for name in dir(type(obj)):
        raw = inspect.getattr_static(type(obj), name, None)
        func = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
        if inspect.isfunction(func) and getattr(func, kind, False) is True:
            found.append(getattr(obj, name))
    found.sort(key=lambda m: (-getattr(m, f"{kind}_priority", 0), m.__name__))
    return found
