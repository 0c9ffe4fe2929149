"""Names for runs shown side by side: each run is labelled by what differs between them
(``temperature=0.2`` vs ``temperature=1.2``, an environment argument, the model, the task of
an environment group, the system prompt, the few-shot turns, the rubric, and whether the run
was re-scored). One labelling for ``vf.compare``, ``vf.compare_runs``, the plots, the viewer's
Compare page and ``vf-lite compare``; ``labels=`` (or a dict of runs) names runs by hand."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from verifiers_lite.results.run_metadata import RunMetadata

# Shown as their bare value; every other plain fact as key=value.
_BARE = ("env", "task", "model")
_GROUPS = ("env_args", "sampling_args")
# Facts drawn as words of their own (see _RENDER), in label order after the arguments.
_PROMPT_FACTS = ("system_prompt", "few_shot", "rubric", "rescored")
_PREVIEW_WORDS, _PREVIEW_CHARS = 4, 28


def run_facts(metadata: RunMetadata, first_prompt: Any = None) -> dict[str, Any]:
    """What defines a run, from its metadata: ``env``, ``task`` (one task of an environment
    group), ``model`` (with the ids that answered when they differ from it), ``env_args.NAME``
    per environment argument, ``sampling_args.NAME`` per sampling argument, ``seed``,
    ``system_prompt`` and ``few_shot`` (the prompt template the run recorded; for a run that
    recorded none, the system message of ``first_prompt``, its first row's prompt), ``rubric``
    (function names, weights and code) and ``rescored``."""
    facts: dict[str, Any] = {"env": metadata.get("env_id")}
    if metadata.get("task") is not None:
        facts["task"] = metadata["task"]
    facts["model"] = metadata.get("model")
    if metadata.get("served_models"):  # another model answered than the one named
        facts["model"] = f"{facts['model']} (served: {', '.join(metadata['served_models'])})"
    by_name: Mapping[str, Any] = metadata  # the argument groups, read by their keys' names
    for group in _GROUPS:
        for key, value in sorted((by_name.get(group) or {}).items()):
            facts[f"{group}.{key}"] = value
    if metadata.get("seed") is not None:
        facts["seed"] = metadata["seed"]
    template = metadata.get("prompt_template")
    if isinstance(template, Mapping) and "tasks" not in template:
        facts["system_prompt"] = template.get("system_prompt")
        facts["few_shot"] = template.get("few_shot") or None
    elif isinstance(template, Mapping):  # an environment group: its members' templates as one fact
        facts["system_prompt"] = _canonical(template["tasks"])
    elif isinstance(first_prompt, list) and first_prompt and isinstance(first_prompt[0], Mapping):
        first = first_prompt[0]
        facts["system_prompt"] = first.get("content") if first.get("role") == "system" else None
    rubric = (metadata.get("fingerprint") or {}).get("rubric")
    if rubric is not None:
        facts["rubric"] = _rubric_fact(rubric)
    facts["rescored"] = bool(metadata.get("rescored_from"))
    return facts


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


def _digest(value: Any) -> str:
    return hashlib.sha256(_canonical(value).encode("utf-8")).hexdigest()[:6]


def _rubric_fact(sig: Any) -> dict[str, str]:
    """A rubric fingerprint as ``{"funcs": "correct, format×0.2", "code": hash}``."""
    if isinstance(sig, Mapping) and "tasks" in sig:
        parts = {task: _rubric_fact(part) for task, part in sig["tasks"].items()}
        return {
            "funcs": "; ".join(f"{t}: {p['funcs']}" for t, p in parts.items()),
            "code": _digest(parts),
        }
    funcs = sig.get("funcs", []) if isinstance(sig, Mapping) else sig or []
    names = [
        f"{f[0]}" if float(f[2]) == 1 else f"{f[0]}×{float(f[2]):g}" for f in funcs if len(f) >= 3
    ]
    return {"funcs": ", ".join(names) or "no functions", "code": _digest(sig)}


def _text(value: Any) -> str:
    return "default" if value is None else str(value)


def varying_keys(facts: Sequence[Mapping[str, Any]]) -> list[str]:
    """The facts whose value is not the same in every run (a fact one run lacks counts as
    ``default`` there), in label order: re-scored, env, task, model, environment arguments,
    sampling arguments, seed, system prompt, few-shot turns, rubric."""
    keys: dict[str, None] = {}
    for f in facts:
        keys.update(dict.fromkeys(f))
    order = [
        "rescored",
        "env",
        "task",
        "model",
        *(k for g in _GROUPS for k in keys if k.startswith(g + ".")),
        "seed",
        *_PROMPT_FACTS[:3],
    ]
    varying = [k for k in order if k in keys and len({_text(f.get(k)) for f in facts}) > 1]

    # An environment argument that only sets the system prompt (given as it, or left at its
    # default) is named once, as the prompt.
    def sets_prompt(key: str) -> bool:
        return (
            key.startswith("env_args.")
            and "system_prompt" in varying
            and all(f.get(key) is None or f.get(key) == f.get("system_prompt") for f in facts)
        )

    return [k for k in varying if not sets_prompt(k)]


def _preview(text: str) -> str:
    words = text.split()
    short = " ".join(words[:_PREVIEW_WORDS])
    if len(short) > _PREVIEW_CHARS:
        short = short[:_PREVIEW_CHARS].rstrip()
    return short + ("…" if short != " ".join(words) else "")


def _distinct(
    values: Sequence[Any], short: Callable[[Any], str], long: Callable[[Any], str]
) -> list[str]:
    """Each value by its ``short`` form, or by its ``long`` form when two different values
    share a short one (two system prompts opening with the same words)."""
    shorts = [short(v) for v in values]
    clash = any(
        shorts[i] == shorts[j] and _text(values[i]) != _text(values[j])
        for i in range(len(values))
        for j in range(i)
    )
    return [long(v) for v in values] if clash else shorts


def _system_prompt(values: Sequence[Any]) -> list[str]:
    return _distinct(
        values,
        lambda v: f'system "{_preview(v)}"' if v else "no system prompt",
        lambda v: f"system #{_digest(v)}" if v else "no system prompt",
    )


def _few_shot(values: Sequence[Any]) -> list[str]:
    return _distinct(
        values,
        lambda v: f"few-shot {len(v)} msgs" if v else "no few-shot",
        lambda v: f"few-shot #{_digest(v)}" if v else "no few-shot",
    )


def _rubric(values: Sequence[Any]) -> list[str]:
    funcs = [v["funcs"] if isinstance(v, Mapping) else "default" for v in values]
    if len(set(funcs)) > 1:
        return [f"rubric {f}" for f in funcs]
    return [
        f"rubric code #{v['code']}" if isinstance(v, Mapping) else "rubric default" for v in values
    ]


_RENDER: dict[str, Callable[[Sequence[Any]], list[str]]] = {
    "system_prompt": _system_prompt,
    "few_shot": _few_shot,
    "rubric": _rubric,
    "rescored": lambda values: ["rescored" if v else "original" for v in values],
}


def _parts(key: str, values: Sequence[Any]) -> list[str]:
    """Each run's words for one varying fact: ``temperature=0.2`` (the group prefix dropped),
    the bare env, task or model, or a fact's own words (``system "Answer briefly."``)."""
    if key in _RENDER:
        return _RENDER[key](values)
    if key in _BARE:
        return [_text(v) for v in values]
    texts = _distinct(
        values,
        lambda v: _preview(_text(v)) if len(_text(v)) > _PREVIEW_CHARS else _text(v),
        lambda v: f"#{_digest(v)}",
    )
    return [f"{key.split('.', 1)[-1]}={t}" for t in texts]


def run_labels(
    facts: Sequence[Mapping[str, Any]], names: Sequence[str | None] | None = None
) -> list[str]:
    """A label per run: its given name, else what differs between the runs (``temperature=0.2``,
    ``model-b``, ``system "Answer with a…"``, ``rescored``, ``digits=2, temperature=1``), else
    the model (one run) or ``run i``. Labels that still collide get `` #i``."""
    names = list(names) if names is not None else [None] * len(facts)
    columns = [_parts(k, [f.get(k) for f in facts]) for k in varying_keys(facts)]
    labels = []
    for i, (f, name) in enumerate(zip(facts, names, strict=True)):
        auto = ", ".join(col[i] for col in columns)
        labels.append(
            name or auto or (f"run {i + 1}" if len(facts) > 1 else _text(f.get("model") or "run"))
        )
    repeated = {label for label in labels if labels.count(label) > 1}
    return [f"{label} #{i + 1}" if label in repeated else label for i, label in enumerate(labels)]
