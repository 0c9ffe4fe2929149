"""One export mechanism for every package facade, and every name it offers is its own and resolves.

A facade (a package's ``__init__.py`` that offers names) lists them once, as the imports of its
``if TYPE_CHECKING:`` block, and serves them on first use (``type_checking_exports`` +
``lazy_exports``): no hand-written table or ``__getattr__``, no eager import. Each name is
defined inside the facade's package (a name it offered that another package defines is a moved
name: it resolves with a DeprecationWarning naming its new place), and resolves in a fresh
process, so no earlier import hides a dead entry. The checker runs on temporary packages too, to
show it catches what it is for.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import verifiers_lite

PACKAGE_DIR = Path(verifiers_lite.__file__).parent
MECHANISM = "verifiers_lite._util.lazy"
# The one kind of name a facade may offer from elsewhere, each with its reason: the classic layer
# offers classic verifiers' namespace, where a name can be the library's own thing.
BORROWED = {
    ("verifiers_lite.classic", "Message"): "classic vf.Message is the one chat message alias",
}


def _facades(package_dir: Path) -> dict[str, Path]:
    """Every package (a folder with ``__init__.py``) under ``package_dir``, found on disk."""
    top = package_dir.name
    found = {}
    for init in sorted(package_dir.rglob("__init__.py")):
        parts = init.parent.relative_to(package_dir).parts
        found[".".join((top, *parts))] = init
    return found


def _is_type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"


def _block_imports(tree: ast.Module) -> dict[str, str]:
    """name -> module of the TYPE_CHECKING block, read independently of the library."""
    found: dict[str, str] = {}
    for node in filter(_is_type_checking, tree.body):
        for stmt in ast.walk(node):
            if isinstance(stmt, ast.ImportFrom):
                module = "." * stmt.level + (stmt.module or "")
                found.update({a.asname or a.name: module for a in stmt.names})
    return found


def _import_problems(tree: ast.Module, top: str) -> list[str]:
    """Imports outside the TYPE_CHECKING block: only the mechanism, the version and stdlib."""
    # and the root's registrations (a module of their own, so the import graph sees them)
    allowed = {MECHANISM, f"{top}.version", f"{top}._wiring"}
    problems = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if (node.level or module.split(".")[0] == top) and module not in allowed:
                problems.append(f"line {node.lineno}: eager import from {module}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == top:
                    problems.append(f"line {node.lineno}: eager import of {alias.name}")
    return problems


def _table_problems(tree: ast.Module) -> list[str]:
    """A hand-written table or ``__getattr__``/``__dir__``, and where ``__all__`` comes from."""
    problems: list[str] = []
    lazy_table: str | None = None
    all_sources: list[str] | None = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in (
            "__getattr__",
            "__dir__",
        ):
            problems.append(f"line {node.lineno}: hand-written {node.name}")
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        value = getattr(node, "value", None)
        for target in targets:
            name = getattr(target, "id", None)
            if name == "_EXPORTS":
                problems.append(f"line {node.lineno}: hand-written _EXPORTS table")
            if (
                isinstance(value, ast.Call)
                and getattr(value.func, "id", "") == "type_checking_exports"
            ):
                lazy_table = name
            if name == "__all__":
                all_sources = [n.id for n in ast.walk(value) if isinstance(n, ast.Name)]
    offers = any(_is_type_checking(n) for n in tree.body) or all_sources is not None
    if offers and (lazy_table is None or lazy_table not in (all_sources or [])):
        problems.append("__all__ is not made from type_checking_exports(__file__)")
    if offers and "lazy_exports" not in ast.dump(tree):
        problems.append("names are not served by lazy_exports")
    return problems


def _module_file(root: Path, module: str) -> Path | None:
    base = root.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _origin(root: Path, module: str, name: str, top: str) -> str:
    """The module that defines ``name``, following ``from ... import`` lines inside ``top``."""
    path = _module_file(root, module)
    if path is None:
        return module  # a dead module: the fresh-process check reports it
    here = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and name in {a.asname or a.name for a in node.names}:
            source = node.module or ""
            if node.level:
                base = here.rsplit(".", node.level - 1)[0] if node.level > 1 else here
                source = f"{base}.{source}" if source else base
            real = next(a.name for a in node.names if (a.asname or a.name) == name)
            return _origin(root, source, real, top) if source.split(".")[0] == top else source
    return module


def mechanism_problems(package: str, init: Path) -> list[str]:
    """What in ``init`` departs from the one mechanism, or offers a name defined outside
    ``package`` (followed through the modules it names, so a re-export inside one counts)."""
    tree = ast.parse(init.read_text(encoding="utf-8"), str(init))
    top = package.split(".")[0]
    root = init.parents[package.count(".") + 1]
    problems = _import_problems(tree, top) + _table_problems(tree)
    for name, module in _block_imports(tree).items():
        origin = _origin(root, module, name, top)
        if not origin.startswith(package + ".") and (package, name) not in BORROWED:
            problems.append(f"{name} is defined outside {package} (in {origin})")
        if (init.parent / f"{name}.py").exists() or (init.parent / name).is_dir():
            problems.append(f"{name} is also a submodule's name: importing it rebinds the name")
    return problems


_CHECK = """
import importlib, inspect, json, sys, warnings
warnings.simplefilter("ignore", DeprecationWarning)
name = sys.argv[1]
package = importlib.import_module(name)
top = name.split(".")[0]
inside = lambda module: module == name or module.startswith(name + ".")
broken, foreign, moved = {}, {}, {}
for attr in getattr(package, "__all__", []):
    try:
        value = getattr(package, attr)
    except ImportError as exc:  # an optional extra missing is reported, not a dead name
        own = (getattr(exc, "name", None) or "").split(".")[0] == top
        if own or ("pip install" not in str(exc) and "extra" not in str(exc)):
            broken[attr] = f"{type(exc).__name__}: {exc}"
        continue
    except Exception as exc:
        broken[attr] = f"{type(exc).__name__}: {exc}"
        continue
    module = getattr(value, "__module__", None) or ""
    if (inspect.isclass(value) or inspect.isroutine(value)) and not inside(module):
        foreign[attr] = module
for attr, place in getattr(package, "_MOVED", {}).items():
    home, _, new = place.partition(":")
    new = new or attr
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = getattr(package, attr)
        except Exception as exc:
            moved[attr] = f"{type(exc).__name__}: {exc}"
            continue
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    there = importlib.import_module(home)
    moved[attr] = {
        "same": value is getattr(there, new),
        "listed_there": new in getattr(there, "__all__", [new]),
        "still_listed": attr in package.__all__,
        "messages": messages,
        "expected": f"{name}.{attr} moved to {home}.{new}; the old name is removed in the next "
        "release",
    }
print(json.dumps({"broken": broken, "foreign": foreign, "moved": moved}))
"""


def resolve(package: str, path: str | None = None) -> dict[str, dict[str, object]]:
    """Import ``package`` in a fresh process and touch each name it offers and each moved name."""
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [path, env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", _CHECK, package],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


_resolved = functools.cache(resolve)
FACADES = _facades(PACKAGE_DIR)


def test_the_walk_finds_the_facades():
    assert {
        "verifiers_lite",
        "verifiers_lite.server",
        "verifiers_lite.results",
        "verifiers_lite.tools.mcp",
        "verifiers_lite.ui.viewer",
    } <= set(FACADES)


@pytest.mark.parametrize("package", sorted(FACADES))
def test_every_facade_uses_the_one_mechanism_and_offers_only_its_own_names(package):
    assert mechanism_problems(package, FACADES[package]) == []


@pytest.mark.parametrize("package", sorted(FACADES))
def test_every_exported_name_resolves_in_a_fresh_process_and_is_defined_in_its_package(package):
    seen = _resolved(package)
    assert seen["broken"] == {}, f"{package} exports names that do not resolve"
    assert seen["foreign"] == {}, f"{package} re-exports names defined elsewhere"


@pytest.mark.parametrize("package", sorted(FACADES))
def test_a_moved_name_resolves_with_a_warning_naming_its_new_place(package):
    for name, seen in _resolved(package)["moved"].items():
        assert isinstance(seen, dict), (name, seen)
        assert seen["same"] and seen["listed_there"] and not seen["still_listed"], (name, seen)
        assert seen["messages"] == [seen["expected"]], name


def test_the_names_that_moved_between_packages_are_the_ones_covered():
    moved = {
        p: set(_resolved(p)["moved"]) for p in ("verifiers_lite.rollout", "verifiers_lite.clients")
    }
    assert moved["verifiers_lite.rollout"] == {
        "APIMultiTurnRollout",
        "OpenAIChatAPI",
        "smollm2_gguf_path",
        "STOP_REASONS",
        "is_truncated",
    }
    assert {"ChatResponse", "ModelClient", "TurnUsage", "Usage"} == moved["verifiers_lite.clients"]
    assert {"create_rollout_server", "RolloutClient", "LocalExecutor", "Template"} <= set(
        _resolved("verifiers_lite")["moved"]
    )


def test_the_root_offers_at_most_82_names():
    # 75, vf.ProgramEnv (an environment a notebook uses like the others), what a notebook
    # writes to bound a run: vf.Limits, vf.Precision, vf.ModelPrice, vf.Score (what a reward
    # function returns to explain its score), and the two inspect_ai interop entry points
    # users call by name (export, load)
    assert len(verifiers_lite.__all__) <= 82, sorted(verifiers_lite.__all__)


def _package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


FACADE = """
from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
_MOVED = {"Gone": "json"}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), moved=_MOVED)

if TYPE_CHECKING:
    from probe.real import fine, join
    from probe.vanished import Ghost
    from json import dumps
"""


def test_the_checker_finds_a_dead_name_a_foreign_name_and_a_bad_moved_name(tmp_path):
    _package(
        tmp_path,
        {
            "probe/__init__.py": FACADE,
            "probe/real.py": "from os.path import join\n\n\ndef fine():\n    return 1\n",
        },
    )
    assert mechanism_problems("probe", tmp_path / "probe" / "__init__.py") == [
        "join is defined outside probe (in os.path)",
        "dumps is defined outside probe (in json)",
    ]
    seen = resolve("probe", str(tmp_path))
    assert set(seen["broken"]) == {"Ghost"}
    assert "No module named 'probe.vanished'" in seen["broken"]["Ghost"]
    assert seen["foreign"] == {"join": "posixpath", "dumps": "json"}
    assert seen["moved"]["Gone"].startswith("AttributeError")  # json has no Gone


def test_the_checker_finds_a_hand_written_table_an_eager_import_and_a_shadowed_name(tmp_path):
    _package(
        tmp_path,
        {
            "probe/__init__.py": """
                from probe.real import fine
                from .real import other

                _EXPORTS = {"fine": ".real"}
                __all__ = ["fine", "other"]


                def __getattr__(name):
                    raise AttributeError(name)
                """,
            "probe/real.py": "def fine():\n    return 1\n\n\ndef other():\n    return 2\n",
            "probe/sub/__init__.py": """
                from typing import TYPE_CHECKING

                from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

                _LAZY = type_checking_exports(__file__)
                __all__ = sorted(_LAZY)
                __getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

                if TYPE_CHECKING:
                    from probe.sub.part import part
                """,
            "probe/sub/part.py": "def part():\n    return 3\n",
        },
    )
    assert mechanism_problems("probe", tmp_path / "probe" / "__init__.py") == [
        "line 2: eager import from probe.real",
        "line 3: eager import from .real",
        "line 5: hand-written _EXPORTS table",
        "line 9: hand-written __getattr__",
        "__all__ is not made from type_checking_exports(__file__)",
        "names are not served by lazy_exports",
    ]
    assert mechanism_problems("probe.sub", tmp_path / "probe" / "sub" / "__init__.py") == [
        "part is also a submodule's name: importing it rebinds the name"
    ]
