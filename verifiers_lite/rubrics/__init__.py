"""Rubrics and reward helpers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

# The public names are the imports of the TYPE_CHECKING block below, each imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.rubrics.judge import JudgeRubric
    from verifiers_lite.rubrics.math import MathRubric
    from verifiers_lite.rubrics.rubric import Rubric, group_reward, is_group_reward
    from verifiers_lite.rubrics.score import Score
