"""A row as flat table columns (metrics, timing and usage expanded): what DataFrames and
Parquet files hold."""

from __future__ import annotations

from typing import Any

from verifiers_lite.core.messages import last_assistant_text
from verifiers_lite.core.reasoning import completion_reasoning
from verifiers_lite.core.records import ROW_KEYS, Row

TIMING_COLUMNS = (
    "queue_ms",
    "generation_ms",
    "env_ms",
    "rollout_ms",
    "group_wait_ms",
    "scoring_ms",
    "total_ms",
)
USAGE_COLUMNS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")

# The row's own columns in row order, with the final assistant text and the turns' reasoning
# beside the completion;
# its nested fields (info, metrics, timing, usage) are expanded after them, the error's
# category gets a column beside its message, and the run count follows.
_EXPANDED = ("info", "metrics", "timing", "usage")
BASE_COLUMNS = tuple(
    c
    for k in ROW_KEYS
    if k not in _EXPANDED
    for c in ((k, "completion_text", "reasoning_text") if k == "completion" else (k,))
) + ("error_category", "attempts")


def flatten_row(row: Row) -> dict[str, Any]:
    """A row as flat DataFrame columns (metrics, timing and usage expanded; ``completion_text``
    is the final assistant message's text, ``reasoning_text`` the reasoning of its assistant
    turns (None when none reasoned); ``attempts`` how often the rollout was run)."""
    out = {k: row.get(k) for k in BASE_COLUMNS if k not in ("error", "error_category", "attempts")}
    completion = row.get("completion")
    out["completion_text"] = (
        last_assistant_text(completion) if isinstance(completion, list) else None
    )
    out["reasoning_text"] = completion_reasoning(completion)
    err = row.get("error")
    out["error"] = err.get("message") if isinstance(err, dict) else err
    out["error_category"] = err.get("category") if isinstance(err, dict) else None
    out["attempts"] = row.get("attempts")
    out["info"] = row.get("info")
    for k in (
        "endpoint",
        "worker",
        "seed",
        "session",
    ):  # where it ran (endpoint / Ray worker), its seed, session
        if k in row:
            out[k] = row[k]
    judge = row.get("judge")
    if isinstance(judge, dict):  # a judge rubric's raw answer and parsed score
        out["judge_response"], out["judge_score"] = judge.get("response"), judge.get("score")
    for name, value in (row.get("metrics") or {}).items():
        out[name if name not in out else f"metric_{name}"] = value
    timing = row.get("timing") or {}
    for k in TIMING_COLUMNS:
        out[k] = timing.get(k)
    usage = row.get("usage") or {}
    for k in USAGE_COLUMNS:
        out[k] = usage.get(k)
    return out
