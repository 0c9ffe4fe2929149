"""MultiTurnEnv: model turn, environment turn, repeat until a stop condition."""

from __future__ import annotations

import inspect
import time
from abc import abstractmethod
from typing import Any, cast

from verifiers_lite.core.dataset import RolloutInput
from verifiers_lite.core.messages import Messages, normalize_messages
from verifiers_lite.core.model_client import ModelClient
from verifiers_lite.core.records import StopReason
from verifiers_lite.core.state import State, elapsed_ms
from verifiers_lite.envs.environment import Environment


class MultiTurnEnv(Environment):
    """Alternates model and environment turns.

    Subclasses write :meth:`env_response` (the environment's reply: new messages) and may
    override :meth:`is_completed` and :meth:`setup_state`. :meth:`is_completed` sees every model
    turn, whatever ends the rollout. Stop reasons: ``length`` (the model hit its token limit;
    wins over the others), ``env_done`` (:meth:`is_completed` said so, or ``env_response`` set
    ``state["done"] = True``), ``max_turns``, ``stop`` (a subclass's natural end, e.g. no tool
    call), ``error``; a per-rollout limit (:class:`~verifiers_lite.core.limits.Limits`) reached
    by a turn that would not end the rollout otherwise names itself (``token_limit``, ...).
    ``env_id`` names it in results (default: the subclass's name).

    Args:
        max_turns: model calls a rollout may make (at least 1); the others are
            :class:`Environment`'s.
    """

    def __init__(self, *args: Any, max_turns: int = 10, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {max_turns}")
        self.max_turns = max_turns

    @property
    def max_model_turns(self) -> int:
        """``max_turns``: the turn budget of one rollout."""
        return self.max_turns

    async def setup_state(self, state: State) -> None:
        """Hook: per-rollout preparation (e.g. a sandbox). Default: nothing."""

    async def is_completed(self, messages: Messages, state: State) -> bool:
        """Whether the rollout is over after the model's latest turn. Default: never (turn
        budget and env_response decide). Set ``state["stop_reason"]`` to name the reason."""
        return False

    @abstractmethod
    async def env_response(self, messages: Messages, state: State) -> Messages:
        """The environment's reply to the model's latest turn, as new messages. Not called after
        the turn that ends the rollout (nobody would read the reply): keep what the rubric needs
        in :meth:`is_completed`, which sees every model turn."""

    async def rollout(
        self,
        input: RolloutInput,
        client: ModelClient,
        model: str,
        sampling_args: dict[str, Any] | None = None,
    ) -> State:
        state = self.init_state(input, model, sampling_args)
        await self.setup_state(state)
        messages: Messages = list(state["prompt"])
        while True:
            response = await self.get_model_response(client, model, messages, state, sampling_args)
            messages.append(response.message)
            state["completion"].append(response.message)
            state["turns"] += 1
            # The environment sees every model turn, a truncated one included, before any stop.
            completed = await self.is_completed(messages, state)
            limit = state.get("limit_reached")  # a per-rollout limit this call reached
            if response.finish_reason == "length":
                state["stop_reason"] = "token_limit" if limit == "token_limit" else "length"
                break
            if completed:
                state["stop_reason"] = state.get("stop_reason") or "env_done"
                break
            if limit:
                state["stop_reason"] = cast(StopReason, limit)
                break
            if state["turns"] >= self.max_turns:
                state["stop_reason"] = "max_turns"
                break
            step, began, t0 = state["trajectory"][-1], elapsed_ms(state), time.perf_counter()
            reply: Any = self.env_response(messages, state)
            if inspect.isawaitable(reply):
                reply = await reply
            step["env"] = {
                "start_ms": began,
                "duration_ms": round((time.perf_counter() - t0) * 1000, 3),
            }
            reply = normalize_messages(reply or [], f"{type(self).__name__}.env_response")
            messages.extend(reply)
            state["completion"].extend(reply)
            if state.get("done"):
                state["stop_reason"] = state.get("stop_reason") or "env_done"
                break
        return state
