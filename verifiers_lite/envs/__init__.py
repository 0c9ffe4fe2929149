"""Environments: the Environment core and ready-made single-turn, multi-turn, tool, Python and
grouped variants, and the multi-turn loop over a chat API (``APIMultiTurnRollout``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

# The public names are the imports of the TYPE_CHECKING block below, each imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.envs.api_multi_turn import APIMultiTurnRollout
    from verifiers_lite.envs.env_group import EnvGroup
    from verifiers_lite.envs.environment import Environment
    from verifiers_lite.envs.multi_turn_env import MultiTurnEnv
    from verifiers_lite.envs.python_env import PythonEnv
    from verifiers_lite.envs.single_turn_env import SingleTurnEnv
    from verifiers_lite.envs.tool_env import ToolEnv
