"""Lazy re-exports: a package's public names imported on first use, so importing it stays cheap
(no fastapi, ray, vllm or torch until a name that needs them is touched)."""

from __future__ import annotations

import ast
import importlib
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


def lazy_exports(
    package: str,
    exports: dict[str, str],
    namespace: dict[str, Any],
    moved: dict[str, str] | None = None,
    subpackages: Iterable[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a name to the module holding
    it (absolute, or relative to ``package`` when it starts with a dot); a name once loaded is
    cached in ``namespace`` (the package's globals). ``moved`` maps a name the package no longer
    offers to where it is now, ``"module"`` (same name) or ``"module:NewName"``: it still resolves,
    with a DeprecationWarning naming the new place (and is not cached, so every use warns).
    ``subpackages`` are packages below ``package`` reached as attributes (``vf.server``), imported
    on first use."""
    names = sorted(namespace.get("__all__") or exports)
    moved_names: dict[str, str] = moved or {}
    packages = frozenset(subpackages)

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None and name in moved_names:
            home, _, new_name = moved_names[name].partition(":")
            new_name = new_name or name
            warnings.warn(
                f"{package}.{name} moved to {home}.{new_name}; the old name is removed in the "
                f"next release",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(importlib.import_module(home), new_name)
        if module is None and name in packages:
            return importlib.import_module(f"{package}.{name}")
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return names

    return __getattr__, __dir__


def type_checking_exports(init_file: str) -> dict[str, str]:
    """name -> module of every ``from MODULE import NAME`` in the ``if TYPE_CHECKING:`` block of
    a package's ``__init__.py``: the one list of its public names, read by type checkers and IDEs
    as imports and by the package at run time as its lazy table (no second list to keep equal)."""
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"), init_file)
    exports: dict[str, str] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING"
        ):
            for stmt in node.body:
                if not isinstance(stmt, ast.ImportFrom) or stmt.module is None or stmt.level:
                    raise ValueError(
                        f"{init_file}: the TYPE_CHECKING block may hold only absolute "
                        f"'from MODULE import NAME' lines (line {stmt.lineno})"
                    )
                exports.update({alias.asname or alias.name: stmt.module for alias in stmt.names})
    if not exports:
        raise ValueError(f"{init_file} has no 'if TYPE_CHECKING:' block of public names")
    return exports
