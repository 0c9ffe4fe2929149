"""The code stays lint-clean and formatted (ruff), type-clean (mypy, strict on the record family and the
scheduler's protocol), layered (import-linter) and made of short functions, so all are part of the
suite; output rows are typed as :class:`verifiers_lite.core.records.Row` in every public signature."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STRICT_MODULES = (
    "verifiers_lite/clients/cache.py",
    "verifiers_lite/core/limits.py",
    "verifiers_lite/core/pricing.py",
    "verifiers_lite/core/records.py",
    "verifiers_lite/core/runnable.py",
    "verifiers_lite/results/compare.py",
    "verifiers_lite/results/export.py",
    "verifiers_lite/results/labels.py",
    "verifiers_lite/ledger/manifest.py",
    "verifiers_lite/ledger/opening.py",
    "verifiers_lite/ledger/run_ledger.py",
    "verifiers_lite/core/summary.py",
    "verifiers_lite/results/outputs.py",
    "verifiers_lite/results/rescore.py",
    "verifiers_lite/results/run_data.py",
    "verifiers_lite/results/run_dir.py",
    "verifiers_lite/results/run_metadata.py",
    "verifiers_lite/results/sessions.py",
    "verifiers_lite/results/store.py",
    "verifiers_lite/run/until.py",
    "verifiers_lite/stats/confidence_sequence.py",
    "verifiers_lite/ui/viewer/runs.py",
)
"""The rollout record family, the protocol the scheduler runs environments through, the run
directory's reader of whole writes, the typed run metadata and its readers and writers here
(a run's outputs, export and loading, re-scoring, comparison and labels, manifests, the response
cache's summary), prices and per-rollout limits, the confidence sequence and the stopping rule
built on it."""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_ruff_is_clean():
    proc = _run("ruff", "check", "verifiers_lite", "environments", "tests", "benchmarks")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]


def test_ruff_format_leaves_every_file_as_it_is():
    """The code is formatted (``ruff format``, line length 100); the line-length rule (120, for
    what the formatter cannot wrap) is part of ``ruff check`` above."""
    proc = _run("ruff", "format", "--check", ".")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]


def test_mypy_is_clean():
    proc = _run("mypy", "verifiers_lite")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]


def _mypy_strict(*paths: str) -> subprocess.CompletedProcess[str]:
    return _run("mypy", "--strict", "--follow-imports=silent", *paths)


def test_mypy_strict_on_the_record_and_the_scheduler_protocol():
    proc = _mypy_strict(*STRICT_MODULES)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]


def test_mypy_strict_check_refuses_an_untyped_def(tmp_path):
    """The strict run above is not vacuous: the same command fails on an untyped function."""
    module = tmp_path / "records_copy.py"
    module.write_text(
        (ROOT / STRICT_MODULES[0]).read_text(encoding="utf-8")
        + "\n\ndef helper(row):\n    return row\n",
        encoding="utf-8",
    )
    proc = _mypy_strict(str(module))
    assert proc.returncode == 1 and "[no-untyped-def]" in proc.stdout, proc.stdout[-2000:]


_ROWISH = re.compile(r"^(rows?|\w+_rows?)$")
_LOOSE = re.compile(r"\bdict\[str, Any\]")
_LOOSE_MANY = re.compile(r"\b(list|Sequence|Iterable|Iterator)\[dict\[str, Any\]")


def _loose_row_signatures(tree: ast.Module) -> list[str]:
    """Public functions and methods whose row parameters (``row``, ``rows``, ``*_rows``) or whose
    rows (what a function named ``*rows*`` returns) are typed as ``dict[str, Any]`` instead of ``Row``; and
    public classes whose ``rows`` attribute is."""
    found: list[str] = []

    def visit(node: ast.AST, public: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, public and not child.name.startswith("_"))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if not public or (child.name.startswith("_") and not child.name.startswith("__")):
                    continue
                a = child.args
                for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                    if (
                        _ROWISH.match(arg.arg)
                        and arg.annotation
                        and _LOOSE.search(ast.unparse(arg.annotation))
                    ):
                        found.append(
                            f"{child.name}({arg.arg}: {ast.unparse(arg.annotation)}) line {child.lineno}"
                        )
                if (
                    "rows" in child.name
                    and child.returns
                    and _LOOSE_MANY.search(ast.unparse(child.returns))
                ):
                    found.append(
                        f"{child.name} -> {ast.unparse(child.returns)} line {child.lineno}"
                    )
                if child.name == "__init__":
                    visit(child, public)  # ``self.rows: ...`` assignments
            elif isinstance(child, ast.AnnAssign) and public:
                target = child.target
                name = (
                    target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                )
                if _ROWISH.match(name) and _LOOSE.search(ast.unparse(child.annotation)):
                    found.append(f"{name}: {ast.unparse(child.annotation)} line {child.lineno}")

    visit(tree, True)
    return found


def test_public_signatures_type_rows_as_row():
    """Output rows are ``Row`` (a caller's dataset row is ``DatasetRow``), never a loose dict."""
    loose = {
        str(path.relative_to(ROOT)): hits
        for path in sorted((ROOT / "verifiers_lite").rglob("*.py"))
        if (hits := _loose_row_signatures(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert not loose, loose


def test_the_row_signature_check_finds_a_loose_row():
    bad = ast.parse(
        "from typing import Any\n"
        "def ok(rows: list[Row], _rows: dict[str, Any]) -> list[Row]: ...\n"
        "def _private(rows: list[dict[str, Any]]) -> None: ...\n"
        "def read_rows(path: str) -> list[dict[str, Any]]: ...\n"
        "class Outputs:\n"
        "    def __init__(self, rows: Sequence[dict[str, Any]]) -> None:\n"
        "        self.rows: Sequence[dict[str, Any]] = rows\n"
        "    async def add(self, row: dict[str, Any] | None) -> None: ...\n"
    )
    assert [hit.split(" line")[0] for hit in _loose_row_signatures(bad)] == [
        "read_rows -> list[dict[str, Any]]",
        "__init__(rows: Sequence[dict[str, Any]])",
        "rows: Sequence[dict[str, Any]]",
        "add(row: dict[str, Any] | None)",
    ]


def test_layers_are_kept():
    """pyproject's import-linter contracts: UI and CLI on top, the core below, no upward import;
    no UI library (tqdm, matplotlib, ipywidgets, IPython) imported below the UI layer."""
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports"))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-1000:]


def _no_ui_contract() -> dict:
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [
        c for c in contracts["contracts"] if c["name"].startswith("Everything below the UI")
    ]
    return contract


def _ui_libraries_named(tree: ast.Module, libraries: list[str]) -> list[str]:
    """Strings naming a UI library (``sys.modules.get("IPython")``, ``import_module("tqdm")``):
    the lookups import-linter cannot see, since no import statement names the module."""
    return [
        f"line {node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and any(node.value == lib or node.value.startswith(lib + ".") for lib in libraries)
    ]


def test_no_module_below_the_ui_looks_up_a_ui_library_by_name():
    """The layers contract forbids importing a UI library below the UI; this also refuses a
    module that reaches one by its name (``sys.modules``, ``importlib``), e.g. to ask IPython for
    the running cell: that belongs to ``ui/``."""
    contract = _no_ui_contract()
    libraries = contract["forbidden_modules"]
    files: list[Path] = []
    for module in contract["source_modules"]:
        path = ROOT / module.replace(".", "/")
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path.with_suffix(".py")]
    assert len(files) > 100 and all(f.exists() for f in files)
    hits = [
        f"{f.relative_to(ROOT)} {hit}"
        for f in files
        for hit in _ui_libraries_named(ast.parse(f.read_text()), libraries)
    ]
    assert hits == [], hits


def test_the_ui_library_lookup_check_finds_one():
    tree = ast.parse(
        "import sys, importlib\n"
        "shell = sys.modules.get('IPython')\n"
        "display = importlib.import_module('IPython.display')\n"
        "note = 'IPython renders this'  # prose naming it is fine\n"
        "bar = sys.modules['tqdm'].tqdm\n"
    )
    assert _ui_libraries_named(tree, _no_ui_contract()["forbidden_modules"]) == [
        "line 2: 'IPython'",
        "line 3: 'IPython.display'",
        "line 5: 'tqdm'",
    ]


# A function longer than this (its docstring included) does several things: split it into named
# steps. Each entry here names a function still over it and why it may stay for now; an entry
# that no longer applies fails the test, so the list only shrinks.
MAX_FUNCTION_LINES = 70
LONG_FUNCTIONS_ALLOWED: dict[str, str] = {}


def function_lengths(source: str, path: str) -> dict[str, int]:
    """``path::qualified.name`` -> lines from ``def`` to the function's last line."""
    import ast

    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    assert child.end_lineno is not None
                    lengths[f"{path}::{name}"] = child.end_lineno - child.lineno + 1
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return lengths


def test_function_lengths_are_measured():
    body = "\n".join(f"    x{i} = {i}" for i in range(90))
    source = f"class A:\n    async def long(self):\n{body.replace('    ', '        ')}\n\ndef short():\n    return 1\n"
    lengths = function_lengths(source, "m.py")
    assert lengths == {"m.py::A.long": 91, "m.py::short": 2}


def test_functions_are_short():
    lengths: dict[str, int] = {}
    # the bundled environments too: they are what users copy
    files = [*(ROOT / "verifiers_lite").rglob("*.py"), *(ROOT / "environments").rglob("*.py")]
    for file in sorted(files):
        rel = file.relative_to(ROOT).as_posix()
        lengths.update(function_lengths(file.read_text(encoding="utf-8"), rel))
    too_long = {
        name: n
        for name, n in lengths.items()
        if n > MAX_FUNCTION_LINES and name not in LONG_FUNCTIONS_ALLOWED
    }
    assert not too_long, (
        f"functions over {MAX_FUNCTION_LINES} lines (split each into named steps): "
        + ", ".join(f"{name} ({n})" for name, n in sorted(too_long.items()))
    )
    stale = [name for name in LONG_FUNCTIONS_ALLOWED if lengths.get(name, 0) <= MAX_FUNCTION_LINES]
    assert not stale, (
        f"no longer over {MAX_FUNCTION_LINES} lines (or gone): remove from LONG_FUNCTIONS_ALLOWED: {stale}"
    )
