"""Running an environment over a dataset: the scheduler (``generate``), its options (``RunConfig``,
and the same fields as keyword arguments: ``EvaluationOptions``, ``RunOptions``), the input plan
and the advice a resume gives when only the rubric changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

# The public names are the imports of the TYPE_CHECKING block below, each imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.run.run_config import EvaluationOptions, RunConfig, RunOptions
