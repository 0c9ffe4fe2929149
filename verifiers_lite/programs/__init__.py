"""Agent programs as environments: any program that speaks the OpenAI API is a rollout.

``ProgramEnv`` runs a command per rollout against the run's interception endpoint, which
forwards each model call to the run's client and captures it; ``branch_rows`` gives one
training row per conversation branch of such rollouts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

# The public names are the imports of the TYPE_CHECKING block below, each imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.programs.capture import branch_rows
    from verifiers_lite.programs.env import DEFAULT_TIME_S, ProgramEnv, ProgramError, ProgramState
    from verifiers_lite.programs.interception import InterceptionServer
    from verifiers_lite.programs.session import PROGRAM_FIELDS
