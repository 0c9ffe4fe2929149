"""SingleTurnEnv: one model answer per prompt."""

from __future__ import annotations

from typing import Any

from verifiers_lite.core.dataset import RolloutInput
from verifiers_lite.core.model_client import ModelClient
from verifiers_lite.core.state import State
from verifiers_lite.envs.environment import Environment


class SingleTurnEnv(Environment):
    """Question in, one answer out, scored by the rubric. Stop reason ``stop`` or ``length``.

    ``vf.SingleTurnEnv(dataset=..., rubric=..., env_id="capitals")``: ``env_id`` names it in
    results, tables and the viewer (default: the class name, so name a plain instance).
    """

    @property
    def max_model_turns(self) -> int:
        """One model turn per rollout."""
        return 1

    async def rollout(
        self,
        input: RolloutInput,
        client: ModelClient,
        model: str,
        sampling_args: dict[str, Any] | None = None,
    ) -> State:
        state = self.init_state(input, model, sampling_args)
        response = await self.get_model_response(
            client, model, state["prompt"], state, sampling_args
        )
        state["completion"].append(response.message)
        state["turns"] = 1
        if response.finish_reason == "length":  # cut by the token limit's clip, or max_tokens
            limit = state.get("limit_reached")
            state["stop_reason"] = "token_limit" if limit == "token_limit" else "length"
        else:
            state["stop_reason"] = "stop"
        return state
