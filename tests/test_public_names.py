"""One list of public names: the TYPE_CHECKING imports of verifiers_lite/__init__.py, which the
package also imports lazily at run time."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import verifiers_lite as vf
from verifiers_lite._util.lazy import type_checking_exports

INIT = Path(vf.__file__)


def _type_checking_imports() -> dict[str, str]:
    """Read independently of the library: every name the TYPE_CHECKING block imports."""
    found: dict[str, str] = {}
    for node in ast.parse(INIT.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for stmt in ast.walk(node):
                if isinstance(stmt, ast.ImportFrom):
                    found.update({a.asname or a.name: stmt.module for a in stmt.names})
    return found


def test_all_is_exactly_the_type_checking_imports():
    expected = _type_checking_imports()
    assert len(expected) > 50 and expected["Environment"] == "verifiers_lite.envs.environment"
    assert sorted(vf.__all__) == sorted([*expected, "__version__"])


@pytest.mark.parametrize("name", sorted(_type_checking_imports()))
def test_every_public_name_is_its_modules_object(name):
    module = _type_checking_imports()[name]
    assert getattr(vf, name) is getattr(importlib.import_module(module), name)
    assert name in dir(vf)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchName'"):
        vf.NoSuchName  # noqa: B018


def test_anything_but_plain_imports_in_the_block_is_refused(tmp_path):
    init = tmp_path / "__init__.py"
    init.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .x import y\n")
    with pytest.raises(ValueError, match="absolute 'from MODULE import NAME'"):
        type_checking_exports(str(init))
    init.write_text("x = 1\n")
    with pytest.raises(ValueError, match="no 'if TYPE_CHECKING:' block"):
        type_checking_exports(str(init))


def test_importing_the_package_stays_light():
    """The lazy table is read without importing what the names live in (no pandas, no datasets)."""
    code = (
        "import sys, verifiers_lite; "
        "print(sorted(m for m in ('datasets', 'openai', 'ray', 'torch') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
