"""Names for runs shown side by side: each run is labelled by what differs between them
(``temperature=0.2`` vs ``temperature=1.2``, an environment argument, the model, the task of
an environment group). One labelling for ``vf.compare``, ``vf.compare_runs``, the plots, the
viewer's Compare page and ``vf-lite compare``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# Shown as their bare value; every other fact as key=value.
_BARE = ("env", "task", "model")
_GROUPS = ("env_args", "sampling_args")


def run_facts(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """What defines a run, from its metadata: ``env``, ``task`` (one task of an environment
    group), ``model``, ``env_args.NAME`` per environment argument, ``sampling_args.NAME`` per
    sampling argument, ``seed``."""
    facts: dict[str, Any] = {"env": metadata.get("env_id")}
    if metadata.get("task") is not None:
        facts["task"] = metadata["task"]
    facts["model"] = metadata.get("model")
    for group in _GROUPS:
        for key, value in sorted((metadata.get(group) or {}).items()):
            facts[f"{group}.{key}"] = value
    if metadata.get("seed") is not None:
        facts["seed"] = metadata["seed"]
    return facts


def _text(value: Any) -> str:
    return "default" if value is None else str(value)


def varying_keys(facts: Sequence[Mapping[str, Any]]) -> list[str]:
    """The facts whose value is not the same in every run (a fact one run lacks counts as
    ``default`` there), in label order: env, task, model, environment arguments, sampling
    arguments, seed."""
    keys: dict[str, None] = {}
    for f in facts:
        keys.update(dict.fromkeys(f))
    order = ["env", "task", "model", *(k for g in _GROUPS for k in keys if k.startswith(g + ".")), "seed"]
    return [k for k in order if k in keys and len({_text(f.get(k)) for f in facts}) > 1]


def _part(key: str, value: Any) -> str:
    """``temperature=0.2`` (the group prefix dropped), or the bare env, task or model."""
    return _text(value) if key in _BARE else f"{key.split('.', 1)[-1]}={_text(value)}"


def run_labels(facts: Sequence[Mapping[str, Any]], names: Sequence[str | None] | None = None) -> list[str]:
    """A label per run: its given name, else what differs between the runs (``temperature=0.2``,
    ``model-b``, ``digits=2, temperature=1``), else the model (one run) or ``run i``. Labels
    that still collide get `` #i``."""
    names = list(names) if names is not None else [None] * len(facts)
    varying = varying_keys(facts)
    labels = []
    for i, (f, name) in enumerate(zip(facts, names, strict=True)):
        auto = ", ".join(_part(k, f.get(k)) for k in varying)
        labels.append(name or auto or (f"run {i + 1}" if len(facts) > 1 else _text(f.get("model") or "run")))
    repeated = {label for label in labels if labels.count(label) > 1}
    return [f"{label} #{i + 1}" if label in repeated else label for i, label in enumerate(labels)]
