"""``APIMultiTurnRollout``: multi-turn tool rollouts over an OpenAI-compatible chat API.

Each trajectory runs on its own worker of a thread pool (network concurrency); a failure of the
API ends that trajectory only (``error``, with the reason in ``error``). Messages only: no token ids (use
``MultiTurnRollout`` or ``TokenClient`` for training data).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from .multi_turn import split_tool_errors
from .sampling import SamplingParams
from .tool_manager import ParsedToolCall, ToolManager
from .traces import SuccessCallback, TraceCallback, write_traces
from .trajectory import Trajectory, as_trajectory, is_truncated

__all__ = ["APIMultiTurnRollout", "ChatAPI", "OpenAIChatAPI"]


class ChatAPI(Protocol):
    """One blocking chat completion: returns (assistant message dict, finish_reason)."""

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: dict[str, Any],
        extra_body: dict[str, Any] | None,
    ) -> tuple[dict[str, Any], str | None]: ...


class OpenAIChatAPI:
    """``ChatAPI`` over the ``openai`` package's sync client (vLLM, llama.cpp, hosted APIs)."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
        client: Any = None,
    ) -> None:
        if client is None:
            from openai import OpenAI

            client = OpenAI(
                base_url=base_url,
                api_key=api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
                timeout=timeout,
                max_retries=max_retries,
            )
        self.client = client
        self.model = model

    def chat(self, messages, tools, params, extra_body):  # type: ignore[no-untyped-def]
        kwargs: dict[str, Any] = dict(params)
        if tools:
            kwargs["tools"] = tools
        if extra_body:
            kwargs["extra_body"] = extra_body
        resp = self.client.chat.completions.create(model=self.model, messages=messages, **kwargs)
        choice = resp.choices[0]
        msg = choice.message.model_dump(exclude_none=True)
        return msg, choice.finish_reason


def _clean(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Send only what the chat API schema accepts.
    allowed = ("role", "content", "tool_calls", "tool_call_id", "name")
    return [{k: m[k] for k in allowed if k in m} for m in messages]


class APIMultiTurnRollout:
    """Multi-turn rollouts against a chat API with a thread pool of ``concurrency`` workers.

    Stop reasons: ``stop`` (no tool calls), ``length`` (``finish_reason='length'``),
    ``max_turns``, ``error`` (the API call or tool dispatch raised; the ``error`` field says why).
    ``truncated`` follows :func:`~verifiers_lite.rollout.trajectory.is_truncated`, as in
    ``MultiTurnRollout``. Tool calls come from the API's ``tool_calls`` or, when a server does
    not parse them, from the assistant text with the ToolManager's parser.
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
        self.trace_errors = 0  # traces not written (callback raised, directory not writable)

    def __call__(
        self,
        trajectories: Sequence[Trajectory | list[dict[str, Any]]],
        tool_manager: ToolManager | Sequence[ToolManager | None] | None = None,
    ) -> list[Trajectory]:
        tm = tool_manager if tool_manager is not None else self.tool_manager
        if isinstance(tm, (list, tuple)):
            if len(tm) != len(trajectories):
                raise ValueError(
                    f"got {len(tm)} tool managers for {len(trajectories)} trajectories"
                )
            managers = list(tm)
        else:
            managers = [tm] * len(trajectories)
        with ThreadPoolExecutor(
            max_workers=self.concurrency, thread_name_prefix="api-rollout"
        ) as pool:
            results = list(
                pool.map(self._run_one, [as_trajectory(t) for t in trajectories], managers)
            )
        if self.trace_dir is not None:
            self.trace_errors += write_traces(
                self.trace_dir, results, self.trace_callback, self.success_callback
            )
        return results

    def _run_one(self, traj: Trajectory, tm: ToolManager | None) -> Trajectory:
        out = copy.deepcopy(traj)
        messages: list[dict[str, Any]] = out["messages"]
        tools = tm.schemas if tm is not None else out.get("tools")
        params = self.sampling_params.to_sampling_args()
        turns, errors, error = 0, [], None
        stop_reason = "stop"
        while True:
            try:
                msg, finish = self.api.chat(
                    _clean(messages), tools or None, params, self.extra_body
                )
            except Exception as e:  # one trajectory's failure must not end the others
                stop_reason, error = "error", f"{type(e).__name__}: {e}"
                break
            turns += 1
            assistant: dict[str, Any] = {"role": "assistant", "content": msg.get("content") or ""}
            messages.append(assistant)
            if finish == "length":
                stop_reason = "length"
                break
            calls = self._calls(msg, tm, turns)
            if not calls:
                stop_reason = "stop"
                break
            assistant["tool_calls"] = [c.to_openai() for c in calls]
            try:
                if tm is None:
                    raise RuntimeError("the model called tools but no ToolManager was given")
                tool_msgs, errs = split_tool_errors(tm.dispatch(calls), turns)
            except Exception as e:
                stop_reason, error = "error", f"{type(e).__name__}: {e}"
                break
            messages.extend(tool_msgs)
            errors.extend(errs)
            if turns >= self.max_turns:
                stop_reason = "max_turns"
                break
        out.update(
            messages=messages,
            turns=turns,
            stop_reason=stop_reason,
            truncated=is_truncated(stop_reason),
            tool_errors=errors,
            error=error,
        )
        return out

    @staticmethod
    def _calls(msg: dict[str, Any], tm: ToolManager | None, turn: int) -> list[ParsedToolCall]:
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
