"""load_environment(env_id): bundled environments/<id>, or any installed module exposing it."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from pathlib import Path
from typing import Any

BUNDLED_PACKAGE = "environments"


def _bundled_dir() -> Path | None:
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def list_environments() -> list[str]:
    """Ids of the bundled environments."""
    root = _bundled_dir()
    if root is None:
        return []
    return sorted(
        p.stem if p.is_file() else p.name
        for p in root.iterdir()
        if not p.name.startswith("_") and (p.suffix == ".py" or (p / "__init__.py").exists())
    )


def is_registered(env_id: str) -> bool:
    """Whether ``env_id`` names a bundled or installed module exposing ``load_environment``."""
    name = env_id.replace("-", "_")
    for candidate in (f"{BUNDLED_PACKAGE}.{name}", name):
        try:
            if importlib.util.find_spec(candidate) is None:
                continue
            return callable(getattr(importlib.import_module(candidate), "load_environment", None))
        except (ImportError, ValueError):
            continue
    return False


def load_environment(env_id: str, **kwargs: Any) -> Any:
    """Build environment ``env_id`` with ``kwargs``.

    Looks for ``environments.<id>`` (bundled), then an importable module ``<id>`` (dashes become
    underscores); the module must expose ``load_environment(**kwargs)``.
    """
    if not isinstance(env_id, str) or not env_id.strip():
        raise ValueError(f"env_id must be a non-empty string, got {env_id!r}")
    module_name = env_id.replace("-", "_")
    module = None
    for candidate in (f"{BUNDLED_PACKAGE}.{module_name}", module_name):
        try:
            module = importlib.import_module(candidate)
            break
        except ModuleNotFoundError as exc:
            if exc.name not in (candidate, BUNDLED_PACKAGE) and not candidate.startswith(str(exc.name)):
                raise  # the environment exists but one of its own imports is missing
    if module is None:
        available = ", ".join(list_environments()) or "none"
        raise ValueError(f"unknown environment {env_id!r}; available: {available}")
    loader = getattr(module, "load_environment", None)
    if not callable(loader):
        raise ValueError(f"module {module.__name__!r} has no load_environment(**kwargs) function")
    params = inspect.signature(loader).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(kwargs) - set(params))
        if unknown:
            raise ValueError(
                f"environment {env_id!r} does not take {unknown}; it accepts: {sorted(params) or 'no arguments'}"
            )
    env = loader(**kwargs)
    env.env_id = env_id
    env.env_args = dict(kwargs)
    return env
