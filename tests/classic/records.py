"""A run's rollouts as both frameworks' runners write them, and their comparison. Standard
library only (the verifiers 0.3.1 venv imports it too)."""

from __future__ import annotations

import json
import math
from typing import Any


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


def _field(message: Any, key: str) -> Any:
    return message.get(key) if isinstance(message, dict) else getattr(message, key, None)


def _call_name(call: Any) -> str:
    fn = _field(call, "function")
    return str(_field(call, "name") or (_field(fn, "name") if fn is not None else None))


def completion_summary(completion: Any) -> str:
    """What the rollout's completion said, as one string: for a diff's message, never compared."""
    if isinstance(completion, str):
        return completion
    parts = []
    for m in completion or []:
        calls = [_call_name(c) for c in _field(m, "tool_calls") or []]
        parts.append(
            f"[{_field(m, 'role')}] {_text(_field(m, 'content'))}"
            + (f" calls={calls}" if calls else "")
        )
    return "\n".join(parts)


def rollout_record(
    example_id: Any, reward: Any, metrics: Any, completion: Any, error: Any
) -> dict[str, Any]:
    """One rollout, reduced to what the two frameworks must agree on (and a summary to read)."""
    return {
        "example_id": int(example_id),
        "reward": None if reward is None else float(reward),
        "metrics": {
            str(k): (None if v is None else float(v)) for k, v in sorted((metrics or {}).items())
        },
        "error": None if not error else str(error)[:500],
        "completion": completion_summary(completion),
    }


def by_example(records: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Rollouts grouped by example, each group in a fixed order (reward, then completion)."""
    groups: dict[int, list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault(r["example_id"], []).append(r)
    key = lambda r: (-math.inf if r["reward"] is None else r["reward"], r["completion"])  # noqa: E731
    return {k: sorted(v, key=key) for k, v in sorted(groups.items())}


def _close(a: Any, b: Any, tol: float) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


def differences(
    expected: list[dict[str, Any]], got: list[dict[str, Any]], tol: float = 1e-9
) -> list[str]:
    """Where ``got`` differs from ``expected`` per example: rollout counts, rewards, metrics
    (names and values). Empty when they agree."""
    want, have = by_example(expected), by_example(got)
    out: list[str] = []
    if sorted(want) != sorted(have):
        out.append(f"example ids differ: expected {sorted(want)}, got {sorted(have)}")
    for example_id in sorted(set(want) & set(have)):
        w, h = want[example_id], have[example_id]
        if len(w) != len(h):
            out.append(f"example {example_id}: {len(w)} rollouts expected, {len(h)} got")
            continue
        for i, (a, b) in enumerate(zip(w, h, strict=True)):
            if not _close(a["reward"], b["reward"], tol):
                out.append(
                    f"example {example_id} rollout {i}: reward {a['reward']} expected, {b['reward']} got"
                    f"\n  expected completion: {a['completion'][:300]!r}\n  got completion: {b['completion'][:300]!r}"
                    + (f"\n  got error: {b['error']}" if b["error"] else "")
                )
            if sorted(a["metrics"]) != sorted(b["metrics"]):
                out.append(
                    f"example {example_id} rollout {i}: metrics {sorted(a['metrics'])} "
                    f"expected, {sorted(b['metrics'])} got"
                )
            else:
                bad = [k for k in a["metrics"] if not _close(a["metrics"][k], b["metrics"][k], tol)]
                out.extend(
                    f"example {example_id} rollout {i}: metric {k} {a['metrics'][k]} expected, {b['metrics'][k]} got"
                    for k in bad
                )
    return out


def write(path: Any, env: str, framework: str, records: list[dict[str, Any]]) -> None:
    with open(path, "w") as f:
        json.dump(
            {"env": env, "framework": framework, "rollouts": records}, f, indent=1, sort_keys=True
        )


def read(path: Any) -> dict[str, Any]:
    with open(path) as f:
        return json.load(f)


def raised_error(traceback_text: str) -> str:
    """The error a traceback reports, as ``Type: message`` with the type's module left out: its
    last exception, or the one verifiers 0.3.1's ``load_environment`` wrapped in its own."""
    lines = traceback_text.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln == "Traceback (most recent call last):"]
    errors = [next(ln for ln in lines[i + 1 :] if ln and not ln.startswith(" ")) for i in starts]
    error = next(e for e in reversed(errors) if "Failed to load environment" not in e)
    kind, _, message = error.partition(": ")
    return f"{kind.rpartition('.')[2]}: {message}"
