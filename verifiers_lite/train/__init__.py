"""Training: hand the library's token rows to RL trainers (TRL's GRPO in process; verl, SkyRL
and prime-rl shapes for the others) and check them first.

Names are imported on first use: ``import verifiers_lite.train`` never pulls in torch or trl.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

# The public names are the imports of the TYPE_CHECKING block below, each imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.train.formats import to_prime_rl, to_skyrl, to_verl, trainable_rows
    from verifiers_lite.train.grpo import EnvironmentRollouts, grpo_trainer
    from verifiers_lite.train.probe import PlateauStop, ValidationProbe
    from verifiers_lite.train.profile import StepProfiler, StepTimes
    from verifiers_lite.train.shared_prompt import share_prompt_pass
    from verifiers_lite.train.token_files import read_token_rows, write_token_rows
    from verifiers_lite.train.validate import (
        TrainingDataError,
        TrainingIssue,
        validate_training_rows,
    )
