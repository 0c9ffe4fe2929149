"""What makes two runs the same run: the fingerprint a results directory is resumed against.

A resumed run reuses saved rows only when everything that decides a row's content is unchanged:
the environment and its arguments, the model, the sampling arguments, rollouts per example,
the scoring mode, the rubric (its functions, their code, its parser, the weights) and the library
version — and, per example, the formatted input itself (prompt, answer, info, task). Any
difference is refused, naming the fields, rather than returning rows of another run as this one's.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Final

from verifiers_lite.results.code_identity import code_hash, code_parts

if TYPE_CHECKING:
    from verifiers_lite.core.dataset import RolloutInput
    from verifiers_lite.core.runnable import RunnableEnvironment, RunnableRubric

FINGERPRINT_KEY: Final = "fingerprint"
INPUT_HASH_KEY: Final = "input_hash"
_INPUT_FIELDS = ("prompt", "answer", "info", "task")


def _canonical(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, ensure_ascii=False, default=repr, separators=(",", ":")
    )


def input_hash(inp: RolloutInput) -> str:
    """A short stable hash of one formatted input (what the model is asked, and the answer)."""
    payload = _canonical({k: inp.get(k) for k in _INPUT_FIELDS})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def rubric_signature(env: RunnableEnvironment) -> dict[str, Any]:
    """The environment's rubric as :func:`rubric_fingerprint` describes it."""
    return rubric_fingerprint(env.rubric)


def rubric_fingerprint(rubric: RunnableRubric) -> dict[str, Any]:
    """What decides a rubric's scores: ``{"funcs": [[metric name, qualname, weight, code hash],
    ...], "parser": [class name, code hash], "config": ..., "parts": {metric name: code parts}}``
    (config: a judge's model and prompt; parts: each function's own code and its helpers'
    apart, which name what changed). Code hashes come from
    :mod:`verifiers_lite.results.code_identity`. The module is
    left out of names: one function imported as ``tests.x`` or ``x``, or run as ``__main__``, is
    the same. An environment group's is ``{"tasks": {task: that task's fingerprint}}``."""
    if rubric.task_rubrics:
        return {"tasks": {name: rubric_fingerprint(r) for name, r in rubric.task_rubrics.items()}}
    sig: dict[str, Any] = {
        "funcs": [
            [name, getattr(f, "__qualname__", name), weight, code_hash(f)]
            for name, f, weight in zip(rubric.func_names, rubric.funcs, rubric.weights, strict=True)
        ],
        "parser": [type(rubric.parser).__qualname__, code_hash(rubric.parser)],
        "parts": {
            name: code_parts(f) for name, f in zip(rubric.func_names, rubric.funcs, strict=True)
        },
    }
    extra = rubric.fingerprint_extra()
    if extra is not None:
        sig["config"] = json.loads(_canonical(extra))
    return sig


def run_fingerprint(
    env: RunnableEnvironment,
    model: str,
    sampling_args: dict[str, Any],
    rollouts_per_example: int,
    independent_scoring: bool,
    score_rollouts: bool,
    library_version: str,
) -> dict[str, Any]:
    """The run-level fields a resume must match (JSON-friendly, saved in metadata.json)."""
    return {
        "env_id": env.env_id,
        "env_args": json.loads(_canonical(env.env_args)),
        "model": model,
        "sampling_args": json.loads(_canonical(sampling_args)),
        "rollouts_per_example": rollouts_per_example,
        "independent_scoring": independent_scoring,
        "score_rollouts": score_rollouts,
        "rubric": rubric_signature(env),
        "library_version": library_version,
    }


def fingerprint_diff(saved: dict[str, Any] | None, now: dict[str, Any]) -> list[str]:
    """One line per differing field: ``"model: saved 'a', now 'b'"`` (empty when they match).
    Reward code that changed under the same names is one line starting with
    :data:`REWARD_CODE_CHANGED`, naming the functions."""
    if not saved:
        return ["fingerprint: the saved run has none (written by an older version)"]
    lines = []
    # Fields a run records only when set: one saved but not given now differs too.
    for k in [*now, *(k for k in _WHEN_SET if k in saved and k not in now)]:
        if saved.get(k) == now.get(k):
            continue
        if k == "rubric":
            lines.extend(_rubric_diff(saved.get(k), now[k]))
        else:
            lines.append(f"{k}: saved {saved.get(k)!r}, now {now.get(k)!r}")
    return lines


REWARD_CODE_CHANGED = "reward code changed"
_WHEN_SET = ("seed", "limits")


def only_rubric_changed(lines: list[str]) -> bool:
    """True when everything :func:`fingerprint_diff` found is about the rubric (its functions,
    their code, weights, parser or settings): the saved rollouts can be re-scored instead of
    generated again."""
    return bool(lines) and all(line.startswith(("rubric:", REWARD_CODE_CHANGED)) for line in lines)


def _rubric_diff(saved: Any, now: dict[str, Any]) -> list[str]:
    if not isinstance(saved, dict):  # a list: written before reward code was fingerprinted
        return [
            "rubric: the saved run predates reward-code fingerprints, so its scores cannot be "
            "checked against the current reward code"
        ]
    old, new = _flat_rubric(saved), _flat_rubric(now)
    changed = [
        key
        for key, (ident, code) in new.items()
        if key in old and old[key][0] == ident and old[key][1] != code
    ]
    lines = []
    if {k: v[0] for k, v in old.items()} != {k: v[0] for k, v in new.items()}:
        lines.append(f"rubric: saved {_without_code(saved)!r}, now {_without_code(now)!r}")
        lines.extend(_setting_diff(old, new))
    if changed:
        lines.extend(_code_change_lines(_flat_parts(saved), _flat_parts(now), changed))
    return lines


def _code_change_lines(old: dict[str, Any], new: dict[str, Any], changed: list[str]) -> list[str]:
    """What changed in the functions ``changed`` names: a helper is named as the change, with
    the functions that use it (``answer_of changed; used by solved, efficiency``); a function
    whose own code changed (or saved without its parts) is named alone."""
    users: dict[str, list[str]] = {}
    own = []
    for name in changed:
        before, after = old.get(name), new.get(name)
        if not isinstance(before, dict) or not isinstance(after, dict):
            own.append(name)
            continue
        helpers_before = before.get("helpers") or {}
        moved = [
            h
            for h, code in (after.get("helpers") or {}).items()
            if h in helpers_before and helpers_before[h] != code
        ]
        for helper in moved:
            users.setdefault(helper, []).append(name)
        if before.get("own") != after.get("own") or not moved:
            own.append(name)
    prefix = f"{REWARD_CODE_CHANGED} since the saved run: "
    lines = [
        f"{prefix}{helper} changed; used by {', '.join(names)}" for helper, names in users.items()
    ]
    return [*lines, f"{prefix}{', '.join(own)}"] if own else lines


def _flat_parts(sig: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{display name: code parts} over a rubric fingerprint's functions (helpers of a group's
    task named ``task/helper``)."""
    if "tasks" in sig:
        out: dict[str, Any] = {}
        for task, part in sig["tasks"].items():
            out.update(_flat_parts(part, f"{prefix}{task}/"))
        return out
    parts = sig.get("parts") or {}
    return {
        f"{prefix}{name}": (
            {**p, "helpers": {f"{prefix}{h}": c for h, c in (p.get("helpers") or {}).items()}}
            if isinstance(p, dict)
            else p
        )
        for name, p in parts.items()
    }


def _setting_diff(old: dict[str, tuple[Any, Any]], new: dict[str, tuple[Any, Any]]) -> list[str]:
    """A line per rubric setting (a judge's model, prompt, ...) that differs, by name: the whole
    rubric above can be long, and a changed setting is easy to miss in it."""
    lines = []
    for key, (now, _) in new.items():
        saved = old.get(key, (None, None))[0]
        if not key.endswith("config") or not isinstance(now, dict) or not isinstance(saved, dict):
            continue
        where = key[: -len("config")]  # an environment group's task, as "task/"
        for name in [*now, *(k for k in saved if k not in now)]:
            if saved.get(name) != now.get(name):
                lines.append(
                    f"rubric: {where}setting {name!r}: saved {saved.get(name)!r}, now {now.get(name)!r}"
                )
    return lines


def _flat_rubric(sig: dict[str, Any], prefix: str = "") -> dict[str, tuple[Any, Any]]:
    """{display name: (what it is, its code hash)} over a rubric fingerprint's parts."""
    if "tasks" in sig:
        out: dict[str, tuple[Any, Any]] = {}
        for task, part in sig["tasks"].items():
            out.update(_flat_rubric(part, f"{prefix}{task}/"))
        return out
    out = {
        f"{prefix}{name}": ((qualname, weight), code)
        for name, qualname, weight, code in sig.get("funcs", [])
    }
    parser = sig.get("parser") or [None, None]
    out[f"{prefix}parser {parser[0]}"] = (parser[0], parser[1])
    out[f"{prefix}config"] = (sig.get("config"), None)
    return out


def _without_code(sig: dict[str, Any]) -> Any:
    if "tasks" in sig:
        return {task: _without_code(part) for task, part in sig["tasks"].items()}
    return [[name, qualname, weight] for name, qualname, weight, _ in sig.get("funcs", [])] + (
        [sig["config"]] if "config" in sig else []
    )
