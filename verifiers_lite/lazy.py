"""Lazy re-exports: a package's public names imported on first use, so importing it stays cheap
(no fastapi, ray, vllm or torch until a name that needs them is touched)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, exports: dict[str, str], namespace: dict[str, Any],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a name to the module holding
    it (absolute, or relative to ``package`` when it starts with a dot); a name once loaded is
    cached in ``namespace`` (the package's globals)."""
    names = sorted(namespace.get("__all__") or exports)

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return names

    return __getattr__, __dir__
