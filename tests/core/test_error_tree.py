"""One exception tree: every exception class of the package derives from VerifiersError (the one
interrupt excepted), keeping the builtin base callers catch; records no longer read as
exceptions; the renamed names still answer, with a warning."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import verifiers_lite as vf
from verifiers_lite.core.errors import VerifiersError

PACKAGE = Path(vf.__file__).parent
# Not imported by the package: a script handed to a bare interpreter inside the sandbox.
SCRIPTS = {"verifiers_lite.sandbox._worker"}
# An interrupt, not an error: ``except Exception`` (and so ``except VerifiersError``) must not
# swallow it.
NOT_ERRORS = {"verifiers_lite._util.interrupt.RunInterrupted"}


def _modules_with_classes() -> list[str]:
    """Modules of the package that define a class with a base, read from the source."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.ClassDef) and n.bases for n in ast.walk(tree)):
            parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
            found.append(".".join(parts).removesuffix(".__init__"))
    return [m for m in found if m not in SCRIPTS]


def _exception_classes() -> dict[str, type[BaseException]]:
    out: dict[str, type[BaseException]] = {}
    for name in _modules_with_classes():
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if (
                isinstance(obj, type)
                and issubclass(obj, BaseException)
                and obj.__module__ == name
                or (obj is VerifiersError and name == "verifiers_lite.core.errors")
            ):
                out[f"{name}.{attr}"] = obj
    return out


def test_every_exception_of_the_package_is_a_verifiers_error():
    classes = _exception_classes()
    # Some named by hand, so an enumeration that finds nothing cannot pass.
    for name in (
        "verifiers_lite.core.content.ContentNotSupportedError",
        "verifiers_lite.stats.error_bars.UndefinedStatistic",
        "verifiers_lite.train.validate.TrainingDataError",
        "verifiers_lite.results.paired.ExamplesMismatchError",
        "verifiers_lite.classic.errors.ToolCallError",
        "verifiers_lite.tools.functions.ToolCallFailed",
    ):
        assert name in classes, name
    assert len(classes) >= 41
    outside = sorted(n for n, c in classes.items() if not issubclass(c, VerifiersError))
    assert outside == sorted(NOT_ERRORS)
    assert not issubclass(classes[next(iter(NOT_ERRORS))], Exception)


def test_builtin_bases_callers_catch_are_kept():
    from verifiers_lite._util.extras import MissingDependencyError
    from verifiers_lite.core.content import ContentNotSupportedError
    from verifiers_lite.server.rollout_table import DuplicateRolloutError
    from verifiers_lite.stats.error_bars import UndefinedStatistic
    from verifiers_lite.train.validate import TrainingDataError

    assert issubclass(ContentNotSupportedError, ValueError)
    assert issubclass(UndefinedStatistic, ValueError)
    assert issubclass(TrainingDataError, ValueError)
    assert issubclass(MissingDependencyError, ImportError)
    assert issubclass(DuplicateRolloutError, KeyError)
    assert issubclass(vf.ResumeMismatchError, ValueError)
    with pytest.raises(VerifiersError, match="image"):
        raise ContentNotSupportedError("no image for this model")


def test_one_tool_call_error_and_records_that_do_not_read_as_exceptions():
    from verifiers_lite.classic import errors as classic_errors
    from verifiers_lite.core import records
    from verifiers_lite.tools import functions

    names = {n.rsplit(".", 1)[1] for n in _exception_classes()}
    assert sorted(names).count("ToolCallError") == 1
    assert classic_errors.ToolCallError.__mro__[1] is classic_errors.ToolError
    with pytest.warns(DeprecationWarning, match="renamed ToolCallFailed"):
        assert functions.ToolCallError is functions.ToolCallFailed  # type: ignore[attr-defined]
    assert not hasattr(records, "RolloutError") and not hasattr(records, "ToolError")
    with pytest.warns(DeprecationWarning, match="verifiers_lite.core.records.ErrorRecord"):
        assert vf.RolloutError is records.ErrorRecord  # type: ignore[attr-defined]
    assert vf.VerifiersError is VerifiersError
