"""Where the classic ``verifiers`` names resolve: only inside classic environment modules.

A classic environment module says ``import verifiers as vf`` (or ``from verifiers.types import
State``). verifiers_lite never installs a top-level ``verifiers`` package and never touches
``sys.modules["verifiers"]``: a real ``verifiers`` (0.3.1, 0.4.x, or none) stays what every other
module in the process imports. Instead, a module recognised as classic (its source, or a module
of its top-level package, imports ``verifiers`` other than ``verifiers.v1``) is executed with
builtins of its own whose ``__import__`` answers ``verifiers`` and ``verifiers.<path>`` with this
layer's modules. Every function, class and lambda defined in that module keeps those builtins,
so imports made later (inside ``load_environment`` or a reward function) resolve the same way.

What a classic module imports is judged the same way: a top-level module or package it imports
(a sibling ``helpers.py``, a ``utils/`` package beside it), at load time or lazily inside a
function, that imports ``verifiers`` is scoped too, and so is what ``importlib.import_module``
(the classic module's ``importlib``) loads. Scoped modules are executed through a meta-path
finder that acts only on those top-level names, and only while they are open
(:mod:`verifiers_lite.classic.isolation`): afterwards ``sys.modules`` holds under their names
what it held before, so a plain import elsewhere behaves as without verifiers_lite. Relative
imports, ``verifiers.v1`` and any other name go to the ordinary import system. This module uses
the standard library only: the layer's modules are named here by string and imported on first
use.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from verifiers_lite.classic.isolation import ScopedModules

_PACKAGE = "verifiers_lite.classic"

# Classic module paths -> the module of this layer that provides their names.
CLASSIC_MODULES: dict[str, str] = {
    "verifiers.types": f"{_PACKAGE}.types",
    "verifiers.errors": f"{_PACKAGE}.errors",
    "verifiers.decorators": f"{_PACKAGE}.decorators",
    "verifiers.envs.environment": f"{_PACKAGE}.environment",
    "verifiers.envs.multiturn_env": f"{_PACKAGE}.multiturn",
    "verifiers.envs.singleturn_env": f"{_PACKAGE}.multiturn",
    "verifiers.envs.tool_env": f"{_PACKAGE}.tool_env",
    "verifiers.envs.stateful_tool_env": f"{_PACKAGE}.tool_env",
    "verifiers.envs.env_group": f"{_PACKAGE}.env_group",
    "verifiers.envs.integrations.reasoninggym_env": f"{_PACKAGE}.reasoning_gym",
    "verifiers.envs.reasoninggym_env": f"{_PACKAGE}.reasoning_gym",
    "verifiers.envs.sandbox_env": f"{_PACKAGE}.unsupported",
    "verifiers.envs.python_env": f"{_PACKAGE}.unsupported",
    "verifiers.rubrics.rubric": f"{_PACKAGE}.rubric",
    "verifiers.rubrics.rubric_group": f"{_PACKAGE}.rubric",
    "verifiers.rubrics.judge_rubric": f"{_PACKAGE}.judge",
    "verifiers.rubrics.tool_rubric": f"{_PACKAGE}.tool_env",
    "verifiers.rubrics.math_rubric": f"{_PACKAGE}.math",
    "verifiers.parsers.parser": f"{_PACKAGE}.parsers",
    "verifiers.parsers.xml_parser": f"{_PACKAGE}.parsers",
    "verifiers.parsers.think_parser": f"{_PACKAGE}.parsers",
    "verifiers.parsers.maybe_think_parser": f"{_PACKAGE}.parsers",
    "verifiers.utils.data_utils": f"{_PACKAGE}.data",
    "verifiers.utils.async_utils": f"{_PACKAGE}.utils",
    "verifiers.utils.tool_utils": f"{_PACKAGE}.utils",
    "verifiers.utils.message_utils": f"{_PACKAGE}.messages",
    "verifiers.utils.env_utils": f"{_PACKAGE}.loading",
    "verifiers.utils.logging_utils": f"{_PACKAGE}.utils",
    "verifiers.utils.config_utils": f"{_PACKAGE}.utils",
}
_PACKAGES = frozenset(
    p.rsplit(".", i)[0] for p in CLASSIC_MODULES for i in range(1, p.count(".") + 1)
)


def _is_classic_name(name: str) -> bool:
    """``verifiers`` or one of its submodules, except the new stack (``verifiers.v1``)."""
    if name != "verifiers" and not name.startswith("verifiers."):
        return False
    return not (name == "verifiers.v1" or name.startswith("verifiers.v1."))


class ClassicNamespace(types.ModuleType):
    """A classic package path (``verifiers``, ``verifiers.envs``...): its submodules are this
    layer's modules, its other names the layer's public names (``vf.SingleTurnEnv``)."""

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        full = f"{self.__name__}.{attr}"
        if full in CLASSIC_MODULES or full in _PACKAGES:
            return resolve(full)
        facade = importlib.import_module(_PACKAGE)
        try:
            return getattr(facade, attr)
        except AttributeError:
            raise AttributeError(
                f"module {self.__name__!r} has no attribute {attr!r}: verifiers_lite's classic layer does "
                f"not provide it (see the docs' guide 'Running classic verifiers environments', "
                f"docs/guides/classic-verifiers.md)"
            ) from None


_NAMESPACES: dict[str, ClassicNamespace] = {}


def resolve(path: str) -> Any:
    """The object a classic module gets for ``import <path>``-style access to ``path``."""
    if path in CLASSIC_MODULES:
        return importlib.import_module(CLASSIC_MODULES[path])
    if path == "verifiers" or path in _PACKAGES:
        space = _NAMESPACES.get(path)
        if space is None:
            space = _NAMESPACES[path] = ClassicNamespace(path)
            facade = importlib.import_module(_PACKAGE)
            # ``from verifiers import *``, and the version of the classic API followed
            space.__dict__.update(__all__=list(facade.__all__), __version__=facade.__version__)
        return space
    raise ModuleNotFoundError(
        f"No module named {path!r} in verifiers_lite's classic layer (a classic environment imports it); "
        f"provided: verifiers, {', '.join(sorted(CLASSIC_MODULES))}",
        name=path,
    )


_ORIGINAL_IMPORT = builtins.__import__
_STDLIB = frozenset(sys.stdlib_module_names) | {
    "verifiers",
    "verifiers_lite",
    "verifiers_lite_envs",
}


def _root_of(name: str, globals: Any, level: int) -> str:
    """The top-level name an import statement of a module with ``globals`` reaches."""
    if level == 0:
        return name.partition(".")[0]
    package = (globals or {}).get("__package__") or ""
    return package.partition(".")[0]


def classic_import(
    name: str,
    globals: Any = None,
    locals: Any = None,
    fromlist: Any = (),
    level: int = 0,
) -> Any:
    """``__import__`` of classic modules: the classic names from this layer, classic helper
    modules within the scope, the rest as usual."""
    if level == 0 and _is_classic_name(name):
        target = resolve(name)
        return target if fromlist else resolve("verifiers")
    root = _root_of(name, globals, level)
    if _scoped_root(root):
        with MODULES.window(root):
            return _ORIGINAL_IMPORT(name, globals, locals, fromlist, level)
    module = _ORIGINAL_IMPORT(name, globals, locals, fromlist, level)
    return _IMPORTLIB if module is importlib else module


def scoped_import_module(name: str, package: str | None = None) -> types.ModuleType:
    """``importlib.import_module`` as classic modules see it: classic names from this layer,
    classic helper modules within the scope."""
    absolute = importlib.util.resolve_name(name, package) if name.startswith(".") else name
    if _is_classic_name(absolute):
        return cast(types.ModuleType, resolve(absolute))
    root = absolute.partition(".")[0]
    if _scoped_root(root):
        with MODULES.window(root):
            return importlib.import_module(absolute)
    return importlib.import_module(absolute)


class _ScopedImportlib(types.ModuleType):
    """The ``importlib`` classic modules get: the real one, with :func:`scoped_import_module`."""

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib, attr)


_IMPORTLIB = _ScopedImportlib("importlib", importlib.__doc__)
_IMPORTLIB.import_module = scoped_import_module  # type: ignore[attr-defined]


CLASSIC_BUILTINS: dict[str, Any] = {**builtins.__dict__, "__import__": classic_import}


def _imports_classic(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(_is_classic_name(a.name) for a in node.names):
            return True
        if (
            isinstance(node, ast.ImportFrom)
            and not node.level
            and node.module
            and _is_classic_name(node.module)
        ):
            return True
    return False


def _source_files(spec: importlib.machinery.ModuleSpec) -> list[Path]:
    """The module's own file, or every ``.py`` file of its package directory (a bounded walk)."""
    if spec.submodule_search_locations:
        files: list[Path] = []
        for location in spec.submodule_search_locations:
            files.extend(sorted(Path(location).rglob("*.py"))[:500])
        return files
    return [Path(spec.origin)] if spec.origin and spec.origin.endswith(".py") else []


def is_classic_module(name: str) -> bool:
    """Whether top-level module ``name`` (not imported) is written against classic verifiers."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    for path in _source_files(spec):
        try:
            source = path.read_bytes()
            # most files never name verifiers: parse only those that do
            if b"verifiers" in source and _imports_classic(ast.parse(source, str(path))):
                return True
        except (OSError, SyntaxError, ValueError):
            continue
    return False


class _ClassicLoader(importlib.abc.Loader):
    """Executes a module of a classic package with the classic builtins; the rest is its own
    loader's (source, resources, file name)."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: types.ModuleType) -> None:
        module.__dict__["__builtins__"] = CLASSIC_BUILTINS
        self._loader.exec_module(module)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(self._loader, attr)


class ClassicPackageFinder(importlib.abc.MetaPathFinder):
    """Finds modules of the classic packages named in :attr:`roots` (and nothing else) with the
    other finders, and has them executed with the classic builtins."""

    def __init__(self) -> None:
        self.roots: set[str] = set()
        self._local = threading.local()

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        root = fullname.partition(".")[0]
        if (
            root not in self.roots
            or not MODULES.is_open(root)
            or getattr(self._local, "busy", False)
        ):
            return None
        self._local.busy = True  # the other finders may call find_spec again: answer them None
        try:
            spec = _spec_from_other_finders(self, fullname, path, target)
        finally:
            self._local.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _ClassicLoader(spec.loader)
        return spec


def _spec_from_other_finders(
    finder: ClassicPackageFinder,
    fullname: str,
    path: Any,
    target: Any,
) -> importlib.machinery.ModuleSpec | None:
    for other in sys.meta_path:
        if other is finder or not hasattr(other, "find_spec"):
            continue
        spec = other.find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None


_FINDER = ClassicPackageFinder()
MODULES = ScopedModules()
_LOCK = threading.Lock()
_DECIDED: dict[str, bool] = {}  # top-level names already read: classic or not


def _scoped_root(root: str) -> bool:
    """Whether top-level name ``root`` is (now found to be) a classic one, imported within the
    scope. Each name is read once; the standard library and verifiers_lite never are."""
    if not root or root in _STDLIB or root in sys.builtin_module_names:
        return False
    decided = _DECIDED.get(root)
    if decided is not None:
        return decided
    classic = is_classic_module(root)
    try:
        if classic or importlib.util.find_spec(root) is not None:
            _DECIDED[root] = classic  # one that is not there yet may appear later
    except (ImportError, ValueError):
        pass
    if classic:
        with _LOCK:
            _FINDER.roots.add(root)
            if _FINDER not in sys.meta_path:
                sys.meta_path.insert(0, _FINDER)
    return classic


def import_environment_module(name: str) -> types.ModuleType:
    """Import environment module ``name``: a classic one (see the module docstring) within the
    classic scope, leaving ``sys.modules`` as it was; any other as usual."""
    root = name.partition(".")[0]
    if _scoped_root(root):
        with MODULES.window(root):
            return importlib.import_module(name)
    return importlib.import_module(name)


def run_environment_loader(loader: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Call an environment's ``load_environment(**kwargs)``; a classic one with its modules
    open (:meth:`ScopedModules.window`), what 0.3.1 refuses there noted with what runs instead."""
    root = str(getattr(loader, "__module__", "") or "").partition(".")[0]
    if not (is_classic_function(loader) and root in _FINDER.roots):
        return loader(**kwargs)
    with MODULES.window(root):
        try:
            return loader(**kwargs)
        except Exception as exc:
            _note_message_objects_in_dataset(exc)
            raise


_MESSAGE_CLASSES = ("SystemMessage", "UserMessage", "AssistantMessage", "ToolMessage")


def _note_message_objects_in_dataset(exc: Exception) -> None:
    """pyarrow's refusal of message models inside ``Dataset.from_list`` (0.3.1's too), noted."""
    text = str(exc)
    if type(exc).__name__ == "ArrowInvalid" and any(f"type {c}" in text for c in _MESSAGE_CLASSES):
        exc.add_note(
            "verifiers 0.3.1 refuses this too: a datasets.Dataset holds plain values. verifiers_lite "
            "runs the same rows with plain message dicts ({'role': 'user', 'content': ...})."
        )


def is_classic_function(func: Any) -> bool:
    """Whether ``func`` was defined in a module executed within the classic scope."""
    return getattr(func, "__globals__", {}).get("__builtins__") is CLASSIC_BUILTINS


def is_classic_scoped(module: types.ModuleType) -> bool:
    """Whether ``module`` was executed within the classic scope."""
    return module.__dict__.get("__builtins__") is CLASSIC_BUILTINS
