"""Where the classic ``verifiers`` names resolve: only inside classic environment modules.

A classic environment module says ``import verifiers as vf`` (or ``from verifiers.types import
State``). verifiers_lite never installs a top-level ``verifiers`` package and never touches
``sys.modules["verifiers"]``: a real ``verifiers`` (0.4.x, or none) stays what every other module
in the process imports. Instead, a module that :func:`import_environment_module` recognises as
classic (its source imports ``verifiers`` other than ``verifiers.v1``) is executed with builtins
of its own whose ``__import__`` answers ``verifiers`` and ``verifiers.<path>`` with this layer's
modules. Every function, class and lambda defined in that module keeps those builtins, so imports
made later (inside ``load_environment`` or a reward function) resolve the same way. The modules
of the classic module's top-level package (``my_env.rubrics`` beside ``my_env``) are executed the
same way, through a meta-path finder that acts only on those package names and asks the other
finders for the file. Relative imports, ``verifiers.v1`` and any other name go to the ordinary
import system. This module uses the standard library only: the layer's modules are named here by
string and imported on first use.
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
from pathlib import Path
from typing import Any

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


def classic_import(
    name: str,
    globals: Any = None,
    locals: Any = None,
    fromlist: Any = (),
    level: int = 0,
) -> Any:
    """``__import__`` of classic modules: the classic names from this layer, the rest as usual."""
    if level == 0 and _is_classic_name(name):
        target = resolve(name)
        return target if fromlist else resolve("verifiers")
    return _ORIGINAL_IMPORT(name, globals, locals, fromlist, level)


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
            if _imports_classic(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                return True
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
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
        if fullname.partition(".")[0] not in self.roots or getattr(self._local, "busy", False):
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
_LOCK = threading.Lock()


def _install(root: str) -> None:
    with _LOCK:
        _FINDER.roots.add(root)
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)


_NOT_CLASSIC: set[str] = set()  # top-level packages already read and found native


def _classic_root(root: str) -> bool:
    if is_classic_module(root):
        return True
    try:
        if importlib.util.find_spec(root) is not None:  # one that is not there yet may appear later
            _NOT_CLASSIC.add(root)
    except (ImportError, ValueError):
        pass
    return False


def import_environment_module(name: str) -> types.ModuleType:
    """Import environment module ``name``: a classic one (see the module docstring) within the
    classic scope, any other as usual. A classic module imported earlier without the scope (its
    ``verifiers`` bound to something else) is imported again within it."""
    root = name.partition(".")[0]
    if root not in _FINDER.roots and root not in _NOT_CLASSIC and _classic_root(root):
        for loaded in [m for m in sys.modules if m == root or m.startswith(root + ".")]:
            module = sys.modules[loaded]
            if getattr(module, "__builtins__", None) is not CLASSIC_BUILTINS:
                del sys.modules[loaded]
        _install(root)
    return importlib.import_module(name)


def is_classic_scoped(module: types.ModuleType) -> bool:
    """Whether ``module`` was executed within the classic scope."""
    return module.__dict__.get("__builtins__") is CLASSIC_BUILTINS
