"""Training: hand the library's token rows to RL trainers (TRL's GRPO in process; verl, SkyRL
and prime-rl shapes for the others) and check them first.

Names are imported lazily: ``import verifiers_lite.train`` never pulls in torch or trl.
"""

# ruff: noqa: F401  (the TYPE_CHECKING imports are there for type checkers)
from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "validate_training_rows": ".validate",
    "TrainingDataError": ".validate",
    "TrainingIssue": ".validate",
    "to_verl": ".formats",
    "to_skyrl": ".formats",
    "to_prime_rl": ".formats",
    "trainable_rows": ".formats",
    "write_token_rows": ".token_files",
    "read_token_rows": ".token_files",
    "grpo_trainer": ".grpo",
    "EnvironmentRollouts": ".grpo",
    "StepProfiler": ".profile",
    "StepTimes": ".profile",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from .formats import to_prime_rl, to_skyrl, to_verl, trainable_rows
    from .grpo import EnvironmentRollouts, grpo_trainer
    from .profile import StepProfiler, StepTimes
    from .token_files import read_token_rows, write_token_rows
    from .validate import TrainingDataError, TrainingIssue, validate_training_rows

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
