"""``APIMultiTurnRollout``: multi-turn tool rollouts over a chat API, through the environments' loop.

Each trajectory is one :class:`ToolEnv` rollout (``MultiTurnEnv``'s turn loop, its stop rules
and error records) with a :class:`ToolManager`'s tools, its model turns made by the chat API
(:func:`~verifiers_lite.clients.chat_api.chat_api_client`). Trajectories run concurrently on
one event loop (the library's sync bridge). Messages only: no token ids (use
``MultiTurnRollout`` or ``TokenClient`` for training data).
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Sequence
from typing import Any, cast

from verifiers_lite._util.sync import run_sync
from verifiers_lite.clients.chat_api import ChatAPI, chat_api_client, clean_messages
from verifiers_lite.core.dataset import RolloutInput
from verifiers_lite.core.messages import Messages, normalize_messages
from verifiers_lite.core.model_client import ChatResponse, ModelClient
from verifiers_lite.core.reasoning import ReasoningHistory, check_reasoning_history
from verifiers_lite.core.records import FailedToolCall
from verifiers_lite.core.state import State
from verifiers_lite.envs.tool_env import ToolEnv
from verifiers_lite.rollout.multi_turn import split_tool_errors
from verifiers_lite.rollout.sampling import SamplingParams
from verifiers_lite.rollout.tool_manager import ParsedToolCall, ToolManager
from verifiers_lite.rollout.traces import SuccessCallback, TraceCallback, write_traces
from verifiers_lite.rollout.trajectory import Trajectory, as_trajectory, is_truncated

__all__ = ["APIMultiTurnRollout"]


class _APIState(State, total=False):
    tool_errors: list[FailedToolCall]  #: failed tool calls
    # The calls parsed from the latest model turn, for env_response: their parse errors are
    # answered to the model, and an OpenAI tool_calls entry cannot carry them.
    pending_tool_calls: list[ParsedToolCall]


class _ToolManagerEnv(ToolEnv):
    """A ToolEnv whose tools are a :class:`ToolManager`'s: the API rollout's environment.

    Tool calls come from the API's ``tool_calls`` or, when a server does not parse them, from
    the assistant text with the ToolManager's parser; ids ``call_{turn}_{i}`` when the API
    gives none. Every call is answered by the ToolManager (errors as tool messages, kept in
    ``state["tool_errors"]``)."""

    def __init__(
        self,
        tool_manager: ToolManager | None,
        max_turns: int,
        reasoning_history: ReasoningHistory = "keep",
    ) -> None:
        super().__init__(
            max_turns=max_turns,
            score_rollouts=False,
            reasoning_history=reasoning_history,
            tool_defs=tool_manager.schemas if tool_manager is not None else None,
        )
        self.tool_manager = tool_manager

    async def setup_state(self, state: State) -> None:
        cast(_APIState, state)["tool_errors"] = []

    async def get_model_response(
        self,
        client: ModelClient,
        model: str,
        messages: Messages,
        state: State,
        sampling_args: dict[str, Any] | None = None,
    ) -> ChatResponse:
        response = await super().get_model_response(
            client, model, clean_messages(messages), state, sampling_args
        )
        message: dict[str, Any] = {"role": "assistant", "content": response.content}
        if response.reasoning is not None:
            message["reasoning_content"] = response.reasoning
        if response.finish_reason != "length":  # a cut turn ends the rollout: no calls to answer
            calls = _tool_calls(response.message, self.tool_manager, state["turns"] + 1)
            if calls:
                message["tool_calls"] = [c.to_openai() for c in calls]
                cast(_APIState, state)["pending_tool_calls"] = calls
        response.message = message
        return response

    async def env_response(self, messages: Messages, state: State) -> Messages:
        api_state = cast(_APIState, state)
        calls = api_state.pop("pending_tool_calls", [])
        if self.tool_manager is None:
            raise RuntimeError("the model called tools but no ToolManager was given")
        tool_msgs, errors = split_tool_errors(
            await self.tool_manager.dispatch_async(calls), state["turns"]
        )
        api_state["tool_errors"].extend(errors)
        return tool_msgs


def _tool_calls(msg: dict[str, Any], tm: ToolManager | None, turn: int) -> list[ParsedToolCall]:
    native = msg.get("tool_calls") or []
    if native:
        return [
            ParsedToolCall(
                c.get("id") or f"call_{turn}_{i}",
                c["function"]["name"],
                c["function"].get("arguments") or "{}",
            )
            for i, c in enumerate(native)
        ]
    if tm is None:
        return []
    return tm.parse(msg.get("content") or "", id_prefix=f"call_{turn}_").calls


class APIMultiTurnRollout:
    """Multi-turn rollouts against a chat API, ``concurrency`` trajectories in flight.

    The turn loop is ``MultiTurnEnv``'s (with ``ToolEnv``'s stop rule), so stop reasons are
    the core's: ``stop`` (an answer without tool calls), ``length`` (``finish_reason='length'``),
    ``max_turns`` (the ``max_turns``-th model turn ended the rollout; its tool calls are not
    run), ``error`` (``error`` holds the core's ``{"category", "message"}`` record: e.g.
    ``model_http_error``, ``model_connection``, ``env_error``). ``truncated`` follows
    :func:`~verifiers_lite.core.records.is_truncated`. A tool that fails is answered to the
    model and listed in ``tool_errors``; the trajectory goes on. A thinking model's reasoning
    is kept on its messages as ``reasoning_content`` and sent back as ``reasoning_history``
    says (see ``Environment``).

    Args:
        api: the chat API the model is called through (e.g.
            :class:`~verifiers_lite.clients.OpenAIChatAPI`).
        tool_manager: the tools the model may call: one ``ToolManager`` for every trajectory, or one
            (or None) per trajectory; None: no tools.
        sampling_params: how each turn is sampled (default
            :class:`~verifiers_lite.rollout.SamplingParams`).
        max_turns: model turns a trajectory may take (at least 1).
        concurrency: trajectories in flight at once (at least 1).
        extra_body: more fields for every request's body.
        trace_dir: a folder each finished trajectory is written to, one JSON file each
            (``ok-``/``fail-`` names); None: none written.
        trace_callback: decides what is written of a trajectory: False/None skips it, True writes it
            whole, a dict is written instead.
        success_callback: whether a trajectory's file is named ``ok-`` (default: it ended with
            ``stop``).
        reasoning_history: what earlier turns' reasoning is sent back to the model (``keep``, ...;
            see ``Environment``).
    """

    def __init__(
        self,
        api: ChatAPI,
        tool_manager: ToolManager | Sequence[ToolManager | None] | None = None,
        sampling_params: SamplingParams | None = None,
        max_turns: int = 6,
        concurrency: int = 8,
        extra_body: dict[str, Any] | None = None,
        trace_dir: str | os.PathLike[str] | None = None,
        trace_callback: TraceCallback | None = None,
        success_callback: SuccessCallback | None = None,
        reasoning_history: ReasoningHistory = "keep",
    ) -> None:
        if max_turns < 1 or concurrency < 1:
            raise ValueError("max_turns and concurrency must be >= 1")
        self.api = api
        self.tool_manager = tool_manager
        self.sampling_params = sampling_params or SamplingParams()
        self.max_turns = max_turns
        self.concurrency = concurrency
        self.extra_body = extra_body
        self.trace_dir = trace_dir
        self.trace_callback = trace_callback
        self.success_callback = success_callback
        self.reasoning_history = check_reasoning_history(reasoning_history)
        self.trace_errors = 0  # traces not written (callback raised, directory not writable)
        self._client = chat_api_client(api)

    def __call__(
        self,
        trajectories: Sequence[Trajectory | list[dict[str, Any]]],
        tool_manager: ToolManager | Sequence[ToolManager | None] | None = None,
    ) -> list[Trajectory]:
        return self.run(trajectories, tool_manager)

    def run(
        self,
        trajectories: Sequence[Trajectory | list[dict[str, Any]]],
        tool_manager: ToolManager | Sequence[ToolManager | None] | None = None,
    ) -> list[Trajectory]:
        """Roll out every trajectory (a dict with ``messages``, or a message list); results in
        input order, each a copy of its input with the conversation and how it ended."""
        trajs = [as_trajectory(t) for t in trajectories]
        for i, t in enumerate(trajs):
            normalize_messages(t["messages"], f"trajectory {i}, field 'messages'")
        managers = self._managers(tool_manager, len(trajs))
        results = run_sync(self._run_all(trajs, managers))
        if self.trace_dir is not None:
            self.trace_errors += write_traces(
                self.trace_dir, results, self.trace_callback, self.success_callback
            )
        return results

    def _managers(
        self, tool_manager: ToolManager | Sequence[ToolManager | None] | None, n: int
    ) -> list[ToolManager | None]:
        tm = tool_manager if tool_manager is not None else self.tool_manager
        if isinstance(tm, (list, tuple)):
            if len(tm) != n:
                raise ValueError(f"got {len(tm)} tool managers for {n} trajectories")
            return list(tm)
        return [tm] * n  # type: ignore[list-item]

    async def _run_all(
        self, trajs: list[Trajectory], managers: list[ToolManager | None]
    ) -> list[Trajectory]:
        envs: dict[int, _ToolManagerEnv] = {}
        for tm in managers:
            envs.setdefault(id(tm), _ToolManagerEnv(tm, self.max_turns, self.reasoning_history))
        slots = asyncio.Semaphore(self.concurrency)
        args = self.sampling_params.to_sampling_args()
        if self.extra_body:
            args["extra_body"] = self.extra_body

        async def one(traj: Trajectory, env: _ToolManagerEnv) -> Trajectory:
            async with slots:
                state = await env.rollout_state(_rollout_input(traj, env), self._client, "", args)
            return _trajectory(traj, state)

        return list(
            await asyncio.gather(
                *(one(t, envs[id(tm)]) for t, tm in zip(trajs, managers, strict=True))
            )
        )


def _rollout_input(traj: Trajectory, env: _ToolManagerEnv) -> RolloutInput:
    """The trajectory as a rollout input; without a ToolManager its own ``tools`` are offered."""
    info = (
        {}
        if env.tool_manager is not None or not traj.get("tools")
        else {"tool_defs": traj["tools"]}
    )
    return {"prompt": traj["messages"], "info": info}


def _trajectory(traj: Trajectory, state: State) -> Trajectory:
    """A copy of the input trajectory with the rollout's conversation and how it ended."""
    out = copy.deepcopy(traj)
    stop_reason = state["stop_reason"] or "error"  # a finished rollout always has one
    out.update(
        {
            "messages": [*state["prompt"], *state["completion"]],
            "turns": state["turns"],
            "stop_reason": stop_reason,
            "truncated": is_truncated(stop_reason),
            "tool_errors": cast(_APIState, state).get("tool_errors", []),
            "error": state["error"],
        }
    )
    return out
