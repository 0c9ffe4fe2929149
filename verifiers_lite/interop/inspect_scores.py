"""A rollout's scores in inspect's terms and back: one ``Score`` per reward function and one for
the total reward, or the scores an inspect sample came with, as inspect gave them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from verifiers_lite.core.records import Row
from verifiers_lite.interop.inspect_extra import inspect_module
from verifiers_lite.interop.inspect_samples import INSPECT_KEY, REWARD_SCORE


def score_float(value: Any) -> float:
    """A score value as a number, by inspect's own ``value_to_float`` ("C" 1, "I" 0, "P" 0.5)."""
    return float(inspect_module("inspect_ai.scorer").value_to_float()(value))


def _judge_explanation(row: Row) -> str | None:
    judge = row.get("judge")
    return (
        str(judge.get("response")) if isinstance(judge, Mapping) and judge.get("response") else None
    )


def _final_text(row: Row) -> str | None:
    """The model's last words (inspect's viewer shows a score's answer beside it)."""
    replies = [m for m in row.get("completion") or [] if m.get("role") == "assistant"]
    content = replies[-1].get("content") if replies else None
    return content if isinstance(content, str) and content else None


def score_table(row: Row) -> dict[str, Any] | None:
    """The sample's ``scores``: the inspect sample's own, as it had them (when the row came from
    one); else each reward function's value and ``reward``, the total (a judge's answer as its
    explanation). None for an unscored rollout."""
    s = inspect_module("inspect_ai.scorer")
    kept = ((row.get("env_state") or {}).get(INSPECT_KEY) or {}).get("scores")
    if kept:
        return {name: s.Score.model_validate(score) for name, score in kept.items()}
    scores: dict[str, Any] = {}
    for name, value in (row.get("metrics") or {}).items():
        if value is not None and not math.isnan(value):
            scores[name] = s.Score(value=float(value))
    reward = row.get("reward")
    if reward is not None:
        scores[REWARD_SCORE] = s.Score(
            value=float(reward), answer=_final_text(row), explanation=_judge_explanation(row)
        )
    return scores or None


def inspect_scores_of(sample: Any) -> dict[str, dict[str, Any]]:
    """A sample's scores as JSON (value, answer, explanation, metadata), for a row to keep."""
    return {
        name: score.model_dump(mode="json", exclude_none=True)
        for name, score in (sample.scores or {}).items()
    }
