"""Classic MultiTurnEnv and SingleTurnEnv, with verifiers 0.3.1's rollout loop.

One rollout: ``setup_state(state)`` (it may return the state), then until a stop condition fires:
the next prompt (the dataset prompt first; afterwards the conversation so far plus
``env_response(messages, state)``), one model turn. Stop conditions (``@vf.stop`` methods, by
priority then name) are checked before every model turn, so after a model turn they see it
before ``env_response`` runs: ``has_error`` first, then ``has_final_env_response``,
``max_turns_reached`` (``max_turns`` > 0; -1 is unlimited), ``prompt_too_long`` and the
environment's own. An ``env_response`` that sets ``state["final_env_response"]`` ends the
rollout with those messages appended to the completion and no further model turn. In lenient
mode (:mod:`verifiers_lite.classic.mode`) an ``env_response`` may also return ``(messages,
state)`` as older classic code did, an ``is_completed(messages, state)`` (or a sync one) is asked
after each model turn, and ``state["turn"]`` counts the model turns; 0.3.1's mode refuses them.
A row's ``turns`` is its model turns.
``timeout_seconds`` ends a rollout as ``timeout_reached`` (kept and scored, as in classic).
The ``@vf.cleanup`` handlers run when the rollout ends, before scoring; the completion is the
conversation after the prompt. Every rollout gets the ``num_turns`` metric (weight 0).
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import textwrap
from typing import Any, cast

from verifiers_lite.classic.completions import TextCompletions
from verifiers_lite.classic.decorators import cleanup, stop
from verifiers_lite.classic.environment import Environment
from verifiers_lite.classic.messages import (
    classic_message,
    concat_messages,
    plain_messages,
)
from verifiers_lite.classic.mode import LENIENT_HINT, Deviations, refusal
from verifiers_lite.classic.rubric import Rubric
from verifiers_lite.classic.utils import maybe_await, named_args
from verifiers_lite.core.dataset import RolloutInput
from verifiers_lite.core.model_client import ChatResponse, ModelClient
from verifiers_lite.core.state import State

_STOP_REASONS = {"max_turns_reached": "max_turns", "no_tools_called": "stop", "has_error": "error"}


class MultiTurnMonitorRubric(Rubric):
    """The ``num_turns`` metric (model turns of the rollout), weight 0."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_metric(self.num_turns)

    async def num_turns(self, state: State) -> int:
        return len(state["trajectory"])


def env_messages(
    reply: Any, state: State, where: str, deviations: Deviations | None = None
) -> list[Any]:
    """An ``env_response`` result as message models: messages (dicts or models), or in
    lenient mode ``(messages, state)`` as older classic code returned (the returned state's
    fields are merged into the rollout's state)."""
    if isinstance(reply, tuple) and len(reply) == 2 and isinstance(reply[1], dict):
        if deviations is None:
            raise refusal(
                TypeError(
                    f"Invalid {where} item type: {type(reply[0]).__name__}. "
                    "Expected vf.Message-like objects."
                ),
                "verifiers_lite could take (messages, state) as older classic code returned it. "
                + LENIENT_HINT,
            )
        deviations.note("env_response returning (messages, state)")
        reply, new_state = reply
        if new_state is not state:
            state.update(new_state)
    if reply is None:
        return []
    if isinstance(reply, str):
        return [classic_message({"role": "user", "content": reply})]
    return [classic_message(m) for m in reply]


def reads_state_turn(cls: type) -> bool:
    """Whether the environment class's own code (not this layer's) subscripts ``["turn"]``."""
    for klass in cls.__mro__:
        if klass.__module__.startswith("verifiers_lite."):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.slice, ast.Constant)
                and node.slice.value == "turn"
            ):
                return True
    return False


class MultiTurnEnv(Environment):
    """``vf.MultiTurnEnv``: write ``env_response(messages, state)`` (see the module)."""

    def __init__(
        self, max_turns: int = -1, timeout_seconds: float | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.max_turns = max_turns
        self.timeout_seconds = timeout_seconds
        self.max_total_completion_tokens = -1
        self.add_rubric(MultiTurnMonitorRubric())
        self._check_is_completed()
        self._reads_turn = self.deviations is not None and reads_state_turn(type(self))
        if self._reads_turn and self.deviations is not None:
            self.deviations.note("state['turn'] (the model turns so far, as before verifiers 0.2)")

    def _check_is_completed(self) -> None:
        """0.3.1 calls ``is_completed(state)``: an older ``is_completed(messages, state)`` is
        refused as 0.3.1's call fails, or taken in lenient mode (asked after each model turn)."""
        if type(self).is_completed is MultiTurnEnv.is_completed:
            return
        takes_messages = "messages" in inspect.signature(self.is_completed).parameters
        is_async = inspect.iscoroutinefunction(self.is_completed)
        if not takes_messages and is_async:
            return
        what = "is_completed(messages, state)" if takes_messages else "a sync is_completed(state)"
        if self.deviations is None:
            raise refusal(
                TypeError(
                    f"{type(self).__name__}.is_completed() missing 1 required positional argument: 'state'"
                    if takes_messages
                    else "object bool can't be used in 'await' expression"
                ),
                f"verifiers_lite could ask {what} after each model turn. " + LENIENT_HINT,
            )
        self.deviations.note(f"{what} of older classic code")

    @property
    def max_model_turns(self) -> int | None:
        """``max_turns`` when it bounds the rollout (-1: unlimited)."""
        return self.max_turns if self.max_turns > 0 else None

    async def env_response(self, messages: Any, state: State, **kwargs: Any) -> Any:
        """The environment's reply to the model's latest turn."""
        raise NotImplementedError(
            f"{type(self).__name__} must define env_response(messages, state)"
        )

    async def setup_state(self, state: State, **kwargs: Any) -> State | None:
        """Per-rollout preparation; mutate ``state`` (or return it)."""
        return state

    # -- stop conditions ------------------------------------------------------------------------

    @stop(priority=100)
    async def has_error(self, state: State) -> bool:
        return state.get("error") is not None

    @stop
    async def prompt_too_long(self, state: State) -> bool:
        return bool(state.get("prompt_too_long", False))

    @stop
    async def max_turns_reached(self, state: State) -> bool:
        return self.max_turns > 0 and len(state["trajectory"]) >= self.max_turns

    @stop
    async def max_total_completion_tokens_reached(self, state: State) -> bool:
        limit = self.max_total_completion_tokens
        return limit > 0 and state["usage"]["completion_tokens"] >= limit

    @stop
    async def has_final_env_response(self, state: State) -> bool:
        return state.get("final_env_response") is not None

    async def is_completed(self, state: State, **kwargs: Any) -> bool:
        """Whether a stop condition fires now (classic: checked before every model turn)."""
        return await self.run_stop_conditions(state, **kwargs)

    async def _done(self, state: State) -> bool:
        if type(self).is_completed is MultiTurnEnv.is_completed:
            return await self.is_completed(state)
        if await self.run_stop_conditions(state):
            return True
        params = inspect.signature(self.is_completed).parameters
        if "messages" not in params:  # an override taking only the state
            done = bool(
                await maybe_await(
                    self.is_completed, **named_args(self.is_completed, {"state": state})
                )
            )
        else:  # older classic code: is_completed(messages, state), asked once the model has spoken
            done = bool(state["trajectory"]) and bool(
                await maybe_await(self.is_completed, self._conversation(state), state)
            )
        if done:
            fields = cast(dict[str, Any], state)
            fields.update(is_completed=True, stop_condition="is_completed")
        return done

    # -- the loop -----------------------------------------------------------------------------

    def _conversation(self, state: State) -> list[Any]:
        last = state["trajectory"][-1]
        return concat_messages([last["prompt"], last["completion"]])

    async def get_prompt_messages(self, state: State) -> list[Any]:
        """The next model turn's messages: the prompt first, then the conversation so far and
        the environment's reply to it."""
        if not state["trajectory"]:
            return list(state["prompt"])
        messages = self._conversation(state)
        reply = await maybe_await(self.env_response, messages, state)
        return concat_messages(
            [messages, env_messages(reply, state, "env_response", self.deviations)]
        )

    def add_model_response(
        self, state: State, prompt_messages: list[Any], response: ChatResponse
    ) -> None:
        """Make the model turn (already accounted on the state) a classic trajectory step."""
        fields = cast(dict[str, Any], state)
        message = classic_message(response.message)
        truncated = response.finish_reason == "length"
        fields["trajectory"][-1].update(
            prompt=prompt_messages,
            completion=[message],
            response=None,
            reward=None,
            advantage=None,
            is_truncated=truncated,
            trajectory_id=state["trajectory_id"],
            extras={},
        )
        fields["is_truncated"] = bool(fields.get("is_truncated")) or truncated
        fields["turns"] = len(fields["trajectory"])  # the row's model turns
        if self._reads_turn:
            fields["turn"] = fields["turns"]
        self.render_completion(state)

    def render_completion(self, state: State) -> None:
        """The completion: the conversation after the prompt, plus a final environment reply."""
        fields = cast(dict[str, Any], state)
        if not state["trajectory"]:
            fields["completion"] = []
            return
        conversation = self._conversation(state)
        final = fields.get("final_env_response")
        if final:
            conversation = concat_messages(
                [conversation, env_messages(final, state, "final_env_response", self.deviations)]
            )
        fields["completion"] = conversation[len(state["prompt"]) :]

    async def _turns(
        self, state: State, client: ModelClient, model: str, sampling_args: dict[str, Any] | None
    ) -> None:
        model_client = TextCompletions(client) if self.message_type == "completion" else client
        prepared = await maybe_await(self.setup_state, state)
        if isinstance(prepared, dict) and prepared is not state:
            cast(dict[str, Any], state).update(prepared)
        while not await self._done(state):
            messages = await self.get_prompt_messages(state)
            if state.get("final_env_response") is not None:
                continue
            response = await self.get_model_response(
                model_client, model, plain_messages(messages), state, sampling_args
            )
            self.add_model_response(state, messages, response)

    async def rollout(
        self,
        input: RolloutInput,
        client: ModelClient,
        model: str,
        sampling_args: dict[str, Any] | None = None,
    ) -> State:
        state = self.init_state(input, model, sampling_args)
        fields = cast(dict[str, Any], state)
        if self._reads_turn:
            fields["turn"] = 0
        try:
            async with asyncio.timeout(self.timeout_seconds) as deadline:
                await self._turns(state, client, model, sampling_args)
        except KeyError as exc:
            if exc.args != ("turn",):
                raise
            raise refusal(
                exc,
                "0.3.1 keeps no state['turn'] (len(state['trajectory']) counts the model turns); "
                "verifiers_lite could keep it as verifiers before 0.2 did. " + LENIENT_HINT,
            ) from None
        except TimeoutError:
            if not deadline.expired():
                raise
            fields.update(timed_out=True, is_completed=True, stop_condition="timeout_reached")
        finally:
            await self.run_cleanup_handlers(state)
        state["stop_reason"] = self._stop_reason(state)
        return state

    def _stop_reason(self, state: State) -> Any:
        steps = state["trajectory"]
        if steps and steps[-1].get("finish_reason") == "length":
            return "length"
        condition = state.get("stop_condition")
        if condition == "max_turns_reached" and self.max_turns == 1:
            return "stop"  # a single-turn answer ends naturally
        return _STOP_REASONS.get(str(condition), "env_done")

    @cleanup(priority=100)
    async def render_state(self, state: State) -> None:
        """Render the completion before the environment's own cleanup handlers run."""
        self.render_completion(state)


class SingleTurnEnv(MultiTurnEnv):
    """``vf.SingleTurnEnv``: one model answer per prompt."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_turns=1, **kwargs)

    async def env_response(self, messages: Any, state: State, **kwargs: Any) -> Any:
        raise NotImplementedError("env_response is not implemented for SingleTurnEnv")
