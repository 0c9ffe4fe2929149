"""How a rollout and an inspect sample correspond: sample id = example id, epoch = rollout
index + 1, target = answer, sample metadata = info; what inspect has no field for travels in the
sample metadata under ``verifiers_lite``, and what an inspect sample had that a row has no key
for (its scores as inspect gave them, its input and target as written) in the row's
``env_state["inspect"]``."""

from __future__ import annotations

from typing import Any

from verifiers_lite.core.records import Row

ROW_KEY = "verifiers_lite"
"""Sample-metadata key of a row's fields inspect has no place for."""
INSPECT_KEY = "inspect"
"""``env_state`` key of an inspect sample's own fields (scores, input, target, id, choices)."""
REWARD_SCORE = "reward"
"""Name of the score that holds a rollout's total reward."""


def epoch_of(row: Row) -> int:
    """Inspect's epoch (1-based) of a rollout."""
    return int(row.get("rollout_index") or 0) + 1


def target_text(target: Any) -> str:
    """A sample's target as a row's ``answer``: a list of targets one per line."""
    return target if isinstance(target, str) else "\n".join(str(t) for t in target)


def sample_info(metadata: Any) -> dict[str, Any]:
    """A sample's metadata as a row's ``info``."""
    return {k: v for k, v in dict(metadata or {}).items() if k != ROW_KEY}


def row_extras(row: Row) -> dict[str, Any]:
    """What the exported sample carries for the row beyond inspect's own fields: the row's
    fields inspect has no place for (``ROW_KEY``) and the inspect sample it came from
    (``INSPECT_KEY``), if any."""
    env_state = dict(row.get("env_state") or {})
    kept = env_state.pop(INSPECT_KEY, None)
    error = row.get("error")
    own: dict[str, Any] = {
        "task": row.get("task"),
        "prompt_messages": len(row.get("prompt") or []),
        "stop_reason": row.get("stop_reason"),
        "advantage": row.get("advantage"),
        "error_category": error["category"] if error else None,
        "timing": dict(row.get("timing") or {}),
    }
    if env_state:
        own["env_state"] = env_state
    if "seed" in row:
        own["seed"] = row["seed"]
    return {ROW_KEY: own, INSPECT_KEY: kept}
