"""What the viewer tests share besides fixtures: run ids, a hostile question, rows by hand, and
figures computed without the library."""

from __future__ import annotations

from typing import Any

XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> What is 2 + 2?'


def run_id(name: str) -> str:
    """The viewer's id of a run under ``<root>/evals/``."""
    return f"evals~{name}"


def make_row(eid, idx, reward, **extra):
    return {
        "example_id": eid,
        "rollout_index": idx,
        "prompt": [{"role": "user", "content": f"q{eid}"}],
        "completion": [{"role": "assistant", "content": f"a{eid}.{idx}"}],
        "reward": reward,
        "metrics": {"m": reward},
        "stop_reason": "stop",
        "error": None,
        "turns": 1,
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
        "timing": {"total_ms": 5.0},
        **extra,
    }


def stats_by_hand(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Reward mean over scored rows and error counts, computed without the library."""
    rewards = [r["reward"] for r in rows if r.get("reward") is not None]
    errors: dict[str, int] = {}
    for r in rows:
        if r.get("error"):
            errors[r["error"]["category"]] = errors.get(r["error"]["category"], 0) + 1
    return {
        "mean": sum(rewards) / len(rewards) if rewards else None,
        "scored": len(rewards),
        "errors": errors,
    }
