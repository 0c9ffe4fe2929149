"""Every public constructor says what each of its parameters is: for every class exported at the
package root, each parameter its constructor takes (those it passes on to its bases' included)
has a description in a Google-style ``Args:`` section (the docs' docstring style), or, for a
dataclass, a ``#:`` comment on its field; the reference pages show them from there."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import sys
import typing
from types import ModuleType

import pytest

import verifiers_lite as vf
from tests.helpers.paths import REPO


def _docs_hooks() -> ModuleType:
    """The docs build's hook module, which lists the parameters the reference shows."""
    pytest.importorskip("mkdocs", reason="the docs extra (pip install -e '.[docs]')")
    sys.path.insert(0, str(REPO / "scripts"))
    spec = importlib.util.spec_from_file_location("docs_hooks", REPO / "scripts" / "docs_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _constructed() -> list[type]:
    return [
        obj
        for name in vf.__all__
        if inspect.isclass(obj := getattr(vf, name)) and not typing.is_typeddict(obj)
    ]


def test_every_public_constructor_describes_every_parameter():
    hooks = _docs_hooks()
    undescribed = {
        cls.__name__: [name for name, _kind, _default, text, _owner in rows if not text]
        for cls in _constructed()
        if (rows := hooks.constructor_parameters(cls))
    }
    assert {k: v for k, v in undescribed.items() if v} == {}


class _Partly:
    """Takes two things.

    Args:
        first: described.
    """

    def __init__(self, first: int, second: int) -> None: ...


@dataclasses.dataclass
class _Fields:
    kept: int = 0  #: described
    bare: int = 0


def test_the_check_reads_what_a_reader_would_miss(monkeypatch):
    """The walk covers the environments, rubrics and clients, and an undocumented parameter is
    caught (classes of this file, read the way the package's are)."""
    hooks = _docs_hooks()
    names = {cls.__name__ for cls in _constructed()}
    assert {"SingleTurnEnv", "ToolEnv", "Rubric", "JudgeRubric", "ChatClient", "Limits"} <= names
    assert {"GenerateOutputs", "RunComparison", "RunStats"} <= names  # what the library returns
    monkeypatch.setattr(hooks, "PACKAGE", __name__)
    described = {
        cls.__name__: {
            name: bool(text) for name, _k, _d, text, _o in hooks.constructor_parameters(cls)
        }
        for cls in (_Partly, _Fields)
    }
    assert described == {
        "_Partly": {"first": True, "second": False},
        "_Fields": {"kept": True, "bare": False},
    }
