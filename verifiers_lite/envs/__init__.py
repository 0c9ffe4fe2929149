"""Environments: the Environment core and ready-made single-turn, multi-turn and tool variants."""

from verifiers_lite.envs.environment import Environment
from verifiers_lite.envs.multi_turn_env import MultiTurnEnv
from verifiers_lite.envs.single_turn_env import SingleTurnEnv
from verifiers_lite.envs.tool_env import ToolEnv

__all__ = ["Environment", "MultiTurnEnv", "SingleTurnEnv", "ToolEnv"]
