"""What makes two runs the same run: the fingerprint a results directory is resumed against.

A resumed run reuses saved rows only when everything that decides a row's content is unchanged:
the environment and its arguments, the model, the sampling arguments, rollouts per example,
the scoring mode, the rubric (functions and weights) and the library version — and, per
example, the formatted input itself (prompt, answer, info, task). Any difference is refused,
naming the fields, rather than returning rows of another run as this one's.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from verifiers_lite.dataset import RolloutInput
    from verifiers_lite.envs.environment import Environment

FINGERPRINT_KEY = "fingerprint"
INPUT_HASH_KEY = "input_hash"
_INPUT_FIELDS = ("prompt", "answer", "info", "task")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr, separators=(",", ":"))


def input_hash(inp: RolloutInput) -> str:
    """A short stable hash of one formatted input (what the model is asked, and the answer)."""
    payload = _canonical({k: inp.get(k) for k in _INPUT_FIELDS})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def rubric_signature(env: Environment) -> list[list[Any]]:
    """[[metric name, function qualname, weight], ...] of the environment's rubric. The module is
    left out: one function imported as ``tests.x`` or ``x``, or run as ``__main__``, is the same.
    An environment group's is ``[[task, that task's signature], ...]``."""
    return _signature(env.rubric)


def _signature(rubric: Any) -> list[list[Any]]:
    parts = getattr(rubric, "task_rubrics", None)
    if isinstance(parts, dict):
        return [[name, _signature(r)] for name, r in parts.items()]
    sig: list[list[Any]] = [
        [name, getattr(f, "__qualname__", name), weight]
        for name, f, weight in zip(rubric.func_names, rubric.funcs, rubric.weights, strict=True)
    ]
    extra = getattr(rubric, "fingerprint_extra", None)  # e.g. a judge's model and prompt
    if callable(extra):
        sig.append(["config", json.loads(_canonical(extra()))])
    return sig


def run_fingerprint(
    env: Environment, model: str, sampling_args: dict[str, Any], rollouts_per_example: int,
    independent_scoring: bool, score_rollouts: bool, library_version: str,
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
    """One line per differing field: ``"model: saved 'a', now 'b'"`` (empty when they match)."""
    if not saved:
        return ["fingerprint: the saved run has none (written by an older version)"]
    return [f"{k}: saved {saved.get(k)!r}, now {now.get(k)!r}" for k in now if saved.get(k) != now.get(k)]
