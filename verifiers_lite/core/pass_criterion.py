"""When a rollout counts as scored and when it counts as solved: the rules every summary,
pass@k figure and viewer filter share."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def scored_reward(row: Mapping[str, Any]) -> float | None:
    """A row's reward as a float; None when it has none (rollouts that failed before scoring)."""
    reward = row.get("reward")
    if reward is None or (isinstance(reward, float) and math.isnan(reward)):
        return None
    return float(reward)


def is_scored(row: Mapping[str, Any]) -> bool:
    """Whether a row carries a reward (rollouts that failed before scoring have none)."""
    return scored_reward(row) is not None


@dataclass(frozen=True)
class PassCriterion:
    """When a scored rollout counts as solved: ``metric`` (``"reward"`` or a reward function's
    metric name) >= ``threshold``."""

    metric: str = "reward"  #: ``reward`` or a reward function's metric name
    threshold: float = 1.0  #: the value the metric must reach

    @classmethod
    def coerce(cls, value: PassCriterion | str | float | dict[str, Any] | None) -> PassCriterion:
        """None -> reward >= 1; a number -> reward >= it; a name -> that metric >= 1; a dict
        (as saved in run metadata) -> its fields."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            return cls(str(value.get("metric", "reward")), float(value.get("threshold", 1.0)))
        if isinstance(value, str):
            if not value:
                raise ValueError("pass_criterion: metric name must not be empty")
            return cls(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return cls("reward", float(value))
        raise ValueError(
            f"pass_criterion must be a reward threshold (number), a metric name or a PassCriterion, got {value!r}"
        )

    def passes(self, row: Mapping[str, Any]) -> bool:
        """Whether a scored row meets the criterion (a missing metric does not pass)."""
        value = (
            row.get("reward")
            if self.metric == "reward"
            else (row.get("metrics") or {}).get(self.metric)
        )
        if value is None:
            return False
        value = float(value)
        return not math.isnan(value) and value >= self.threshold

    def describe(self) -> str:
        return f"{self.metric} ≥ {self.threshold:g}"

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "threshold": self.threshold}
