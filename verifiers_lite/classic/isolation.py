"""Where scoped copies of classic modules live: beside ``sys.modules``, never in it for long.

A classic environment's modules (its package, and any top-level module or package it imports
that imports ``verifiers``) are executed within the classic scope. Were they left in
``sys.modules`` under their plain names, a plain ``import hellaswag`` elsewhere in the process
would get verifiers_lite's scoped copy. So they live here, per top-level name ("root"), and are
put into ``sys.modules`` only while that root is *open*: while a classic import of it runs, or
while its ``load_environment`` runs (:meth:`ScopedModules.window`). Opening saves what
``sys.modules`` held under the root's names (a plain copy, or nothing); closing puts the scoped
modules back here and restores what was saved. The import machinery needs the modules in
``sys.modules`` while it works (parents, relative imports, ``dataclasses`` and ``pickle``
looking a class's module up), hence the window; a lock serialises windows across threads (a
plain import of the same name by another thread during a window would see the scoped copy).
Outside a window, ``pickle`` cannot find a scoped module's classes by name: environments travel
to other processes by id (``load_environment``), never pickled. Standard library only.
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager


def _names_under(root: str) -> list[str]:
    prefix = root + "."
    return [name for name in list(sys.modules) if name == root or name.startswith(prefix)]


class ScopedModules:
    """The scoped modules of each root, and which roots are open now."""

    def __init__(self) -> None:
        self._scoped: dict[str, dict[str, types.ModuleType]] = {}
        self._saved: dict[str, dict[str, types.ModuleType]] = {}
        self._depth: dict[str, int] = {}
        self._lock = threading.RLock()

    def is_open(self, root: str) -> bool:
        """Whether ``root``'s scoped modules are in ``sys.modules`` now (its imports are scoped)."""
        return self._depth.get(root, 0) > 0

    def module(self, name: str) -> types.ModuleType | None:
        """The scoped module ``name`` (None when none was imported)."""
        return self._scoped.get(name.partition(".")[0], {}).get(name)

    @contextmanager
    def window(self, root: str) -> Iterator[None]:
        """``root``'s scoped modules in ``sys.modules`` for the block (re-entrant)."""
        with self._lock:
            if self._depth.get(root, 0) == 0:
                self._saved[root] = {n: sys.modules.pop(n) for n in _names_under(root)}
                sys.modules.update(self._scoped.get(root, {}))
            self._depth[root] = self._depth.get(root, 0) + 1
            try:
                yield
            finally:
                self._depth[root] -= 1
                if self._depth[root] == 0:
                    self._scoped[root] = {n: sys.modules.pop(n) for n in _names_under(root)}
                    sys.modules.update(self._saved.pop(root))
