"""The records a run passes along and the contracts every layer shares: messages, content parts,
reasoning, rollout inputs and output rows, error categories, the rollout State, the model-client
protocol, what a runnable environment offers, the environment registry and the progress interface.

Most of them are offered by the package root (``vf.Row``, ``vf.State``); here are a rollout's
model calls as a row keeps them (:func:`model_calls`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

# The public names are the imports of the TYPE_CHECKING block below, each imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.core.records import (
        CallRequest,
        CallTiming,
        EnvTiming,
        ToolCallRecord,
        TrajectoryStep,
    )
    from verifiers_lite.core.trajectory import model_calls
