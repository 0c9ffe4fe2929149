"""A reward function's value with the reason for it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Score:
    """What a reward function may return instead of a bare number: the value and why.

    ``return vf.Score(0.0, f"expected {answer!r}, found {found!r}")`` scores 0.0 and keeps the
    explanation on the rollout's row (``row["explanations"][function_name]``), shown beside the
    score in the viewer, the notebook and the DataFrame's ``explanations`` column. A group
    reward function may return a list of them.
    """

    value: float  #: the score (what the function would otherwise return)
    explanation: str | None = None  #: why, in words a reader checks the score by

    def __float__(self) -> float:
        return float(self.value)
