"""load_environment(env_id): a bundled environment (``verifiers_lite_envs.<id>``, the repository's
``environments/`` folder), an installed environment package (entry point group
``verifiers_lite.environments``, where the bundled ones are registered too), or any importable
module exposing it."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from verifiers_lite.core.runnable import RunnableEnvironment

BUNDLED_PACKAGE = "verifiers_lite_envs"
ENTRY_POINT_GROUP = "verifiers_lite.environments"

_import_module: Callable[[str], ModuleType] = importlib.import_module


def _call_loader(loader: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    return loader(**kwargs)


_run_loader: Callable[[Callable[..., Any], dict[str, Any]], Any] = _call_loader


def register_module_importer(
    importer: Callable[[str], ModuleType],
    run_loader: Callable[[Callable[..., Any], dict[str, Any]], Any] | None = None,
) -> None:
    """How environment modules are imported and their ``load_environment`` called (the package
    root registers the ones that run classic ``verifiers`` modules within their scope); default
    ``importlib.import_module`` and a plain call."""
    global _import_module, _run_loader
    _import_module = importer
    _run_loader = run_loader or _call_loader


# Ids of the form "<scheme>:<rest>" built by a loader of a layer above the core (an inspect_ai
# task, "inspect:file.py@task"): the package root registers each here.
_SCHEMES: dict[str, Callable[..., Any]] = {}


def register_id_scheme(scheme: str, loader: Callable[..., Any]) -> None:
    """Build ids starting ``scheme`` (``"inspect:"``) with ``loader(env_id, **kwargs)``."""
    _SCHEMES[scheme] = loader


def _scheme_loader(env_id: str) -> Callable[..., Any] | None:
    return next((f for scheme, f in _SCHEMES.items() if env_id.startswith(scheme)), None)


@dataclass(frozen=True, slots=True)
class EnvironmentInfo:
    """One environment ``vf-lite list`` shows: its id, where it comes from, its summary line."""

    env_id: str
    source: str  # "bundled", or the distribution that installed it
    description: str


def _key(env_id: str) -> str:
    return env_id.replace("-", "_")


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """Installed environment packages by (underscored) name."""
    return {_key(ep.name): ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _module_summary(module_name: str) -> str:
    """First line of a module's docstring, read from its source without importing it."""
    try:
        spec = importlib.util.find_spec(module_name)
        origin = spec.origin if spec is not None else None
        if not origin or not origin.endswith(".py"):
            return ""
        doc = ast.get_docstring(ast.parse(Path(origin).read_text(encoding="utf-8")))
    except (ImportError, ValueError, OSError, SyntaxError):
        return ""
    if not doc or not doc.strip():
        return ""
    line = doc.strip().splitlines()[0].strip()
    # Bundled docstrings open with "<id>: ..."; the list already shows the id.
    head, sep, rest = line.partition(": ")
    return rest if sep and head == module_name.rsplit(".", 1)[-1] else line


def environment_catalog() -> list[EnvironmentInfo]:
    """Bundled and installed environments with their one-line descriptions."""
    found = [
        EnvironmentInfo(e, "bundled", _module_summary(f"{BUNDLED_PACKAGE}.{e}"))
        for e in list_environments(installed=False)
    ]
    bundled = {_key(info.env_id) for info in found}
    for name, ep in sorted(_entry_points().items()):
        if name in bundled:
            continue  # a bundled environment of the same name wins, as in load_environment
        dist = getattr(ep, "dist", None)
        source = f"installed ({dist.name})" if dist is not None else "installed"
        description = _module_summary(ep.module)
        if not description and dist is not None:
            description = dist.metadata.get("Summary") or ""
        found.append(EnvironmentInfo(ep.name, source, description))
    return found


def _bundled_dir() -> Path | None:
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def list_environments(installed: bool = True) -> list[str]:
    """Ids of the bundled environments, then those of installed environment packages."""
    root = _bundled_dir()
    bundled = (
        []
        if root is None
        else sorted(
            p.stem if p.is_file() else p.name
            for p in root.iterdir()
            if not p.name.startswith("_") and (p.suffix == ".py" or (p / "__init__.py").exists())
        )
    )
    if not installed:
        return bundled
    extra = sorted(ep.name for name, ep in _entry_points().items() if name not in set(bundled))
    return bundled + extra


def environment_loader(env_id: str) -> Any:
    """The ``load_environment`` callable of ``env_id``, or None when nothing provides one."""
    try:
        return _find_loader(env_id)
    except ValueError:
        return None


def _find_loader(env_id: str) -> Any:
    """Bundled module, else an installed entry point, else an importable module."""
    name = _key(env_id)
    for candidate in (f"{BUNDLED_PACKAGE}.{name}", None, name):
        if candidate is None:
            ep = _entry_points().get(name)
            if ep is None:
                continue
            module = _import_module(ep.module)
            target = getattr(module, ep.attr) if ep.attr else module
            loader = getattr(target, "load_environment", target)
            if not callable(loader) or inspect.ismodule(loader):
                raise ValueError(
                    f"entry point {ep.name!r} ({ep.value}) is not a load_environment function"
                )
            return loader
        try:
            module = _import_module(candidate)
        except ModuleNotFoundError as exc:
            if exc.name not in (candidate, BUNDLED_PACKAGE) and not candidate.startswith(
                str(exc.name)
            ):
                raise  # the environment exists but one of its own imports is missing
            continue
        loader = getattr(module, "load_environment", None)
        if not callable(loader):
            raise ValueError(
                f"module {module.__name__!r} has no load_environment(**kwargs) function"
            )
        return loader
    available = ", ".join(list_environments()) or "none"
    raise ValueError(f"unknown environment {env_id!r}; available: {available}")


def is_registered(env_id: str) -> bool:
    """Whether ``env_id`` names a bundled or installed module exposing ``load_environment``."""
    name = env_id.replace("-", "_")
    if name in _entry_points():
        return True
    for candidate in (f"{BUNDLED_PACKAGE}.{name}", name):
        try:
            if importlib.util.find_spec(candidate) is None:
                continue
            return callable(getattr(_import_module(candidate), "load_environment", None))
        except (ImportError, ValueError):
            continue
    return False


def loadable_by_id(env: RunnableEnvironment) -> bool:
    """Whether ``load_environment(env.env_id, **env.env_args)`` rebuilds ``env`` (a Ray worker,
    ``vf-lite rescore``): it was built by ``load_environment`` under that id, and the id still
    names an environment. One built by hand (a notebook's) is not, even when its ``env_id``
    happens to name a bundled one."""
    return bool(env.env_id) and env.loaded_as == env.env_id and is_registered(str(env.env_id))


def load_environment(env_id: str, **kwargs: Any) -> Any:
    """Build environment ``env_id`` with ``kwargs``.

    An id ``inspect:path/file.py@task`` runs an inspect_ai task (the ``inspect`` extra). Else
    looks for ``verifiers_lite_envs.<id>`` (bundled), then an installed package registered under the
    entry point group ``verifiers_lite.environments``, then an importable module ``<id>`` (dashes
    become underscores); each must provide ``load_environment(**kwargs)``.
    """
    if not isinstance(env_id, str) or not env_id.strip():
        raise ValueError(f"env_id must be a non-empty string, got {env_id!r}")
    by_scheme = _scheme_loader(env_id)
    if by_scheme is not None:
        env = by_scheme(env_id, **kwargs)
        env.env_id, env.env_args, env.loaded_as = env_id, dict(kwargs), env_id
        env.source_module = getattr(env, "source_module", None)
        return env
    loader = _find_loader(env_id)
    params = inspect.signature(loader).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(kwargs) - set(params))
        if unknown:
            raise ValueError(
                f"environment {env_id!r} does not take {unknown}; it accepts: {sorted(params) or 'no arguments'}"
            )
    env = _run_loader(loader, kwargs)
    env.env_id = env_id
    env.env_args = dict(kwargs)
    env.source_module = getattr(loader, "__module__", None)  # the code the run manifest hashes
    env.loaded_as = env_id  # how to rebuild it elsewhere (a Ray worker): by id, not pickled
    return env
