"""``MultiTurnRollout``: batched, token-level multi-turn rollouts with tools.

Each turn every active trajectory's ids go to ONE ``sampler.sample`` call; sampled ids are
appended verbatim (labels = ids), tool calls are dispatched, and the template's bridge tokens
(end-of-turn separator, tool turns, generation prompt) are appended with label -100.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .sampling import Sampler, SamplingParams
from .template import Template
from .tool_manager import ParsedToolCall, ToolManager, run_sync
from .traces import SuccessCallback, TraceCallback, write_trace
from .trajectory import Trajectory, as_trajectory, is_truncated

__all__ = ["IGNORE_INDEX", "MultiTurnRollout", "split_tool_errors"]

IGNORE_INDEX = -100


def split_tool_errors(
    tool_msgs: list[dict[str, Any]], turn: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Tool messages without the ToolManager's ``error`` key, and that key as records."""
    clean, errors = [], []
    for m in tool_msgs:
        m = dict(m)
        err = m.pop("error", None)
        if err:
            errors.append(
                {
                    "turn": turn,
                    "tool_call_id": m["tool_call_id"],
                    "name": m.get("name"),
                    "error": err,
                }
            )
        clean.append(m)
    return clean, errors


@dataclass
class _Run:
    """One trajectory in flight."""

    index: int
    out: Trajectory
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    tool_manager: ToolManager | None
    ids: list[int]
    labels: list[int]
    logprobs: list[float] | None
    turns: int = 0
    tool_errors: list[dict[str, Any]] = field(default_factory=list)
    pending: list[ParsedToolCall] = field(default_factory=list)
    last_sampled: list[int] = field(default_factory=list)


class MultiTurnRollout:
    """Batched multi-turn rollout engine over a token-level :class:`Sampler`.

    Calling it with a list of trajectories (dicts with ``messages``) returns as many, in order,
    each a copy of its input plus ``messages``, ``input_ids``, ``labels``, ``logprobs``,
    ``turns``, ``stop_reason``, ``truncated``, ``prompt_length`` and ``tool_errors``. Inputs are
    never mutated. ``max_trajectory_tokens`` caps ``len(input_ids)``: each turn's ``max_tokens``
    shrinks to the remaining budget and a bridge that would overflow ends the trajectory
    (``length``).
    """

    def __init__(
        self,
        sampler: Sampler,
        template: Template,
        tool_manager: ToolManager | None = None,
        sampling_params: SamplingParams | None = None,
        max_turns: int = 6,
        max_trajectory_tokens: int | None = None,
        trace_dir: str | os.PathLike[str] | None = None,
        trace_callback: TraceCallback | None = None,
        success_callback: SuccessCallback | None = None,
    ) -> None:
        if max_turns < 1:
            raise ValueError("max_turns must be >= 1")
        self.sampler = sampler
        self.template = template
        self.tool_manager = tool_manager
        self.sampling_params = sampling_params or SamplingParams()
        self.max_turns = max_turns
        self.max_trajectory_tokens = max_trajectory_tokens
        self.trace_dir = trace_dir
        self.trace_callback = trace_callback
        self.success_callback = success_callback

    @classmethod
    def remote(cls, *args: Any, **kwargs: Any) -> Any:
        """Start this rollout engine as a Ray actor; ``ray.get(actor.__call__.remote(trajs))``."""
        from .ray_actor import remote_rollout

        return remote_rollout(cls, *args, **kwargs)

    def __call__(
        self,
        trajectories: Sequence[Trajectory | list[dict[str, Any]]],
        tool_manager: ToolManager | Sequence[ToolManager | None] | None = None,
        sampling_params: SamplingParams | None = None,
    ) -> list[Trajectory]:
        params = sampling_params or self.sampling_params
        # The template's end-of-turn ids always stop a sample, whatever the caller passed.
        params = params.replace(
            stop_token_ids=tuple(
                dict.fromkeys((*params.stop_token_ids, *self.template.stop_token_ids))
            )
        )
        managers = self._managers(tool_manager, len(trajectories))
        runs = [
            self._start(i, as_trajectory(t), managers[i], params)
            for i, t in enumerate(trajectories)
        ]
        active = [r for r in runs if "stop_reason" not in r.out]
        while active:
            active = self._turn(active, params)
        results = [r.out for r in runs]
        if self.trace_dir is not None:
            for r in runs:
                write_trace(
                    self.trace_dir, r.out, r.index, self.trace_callback, self.success_callback
                )
        return results

    # -- one trajectory -------------------------------------------------------------------
    def _managers(self, tm: Any, n: int) -> list[ToolManager | None]:
        tm = tm if tm is not None else self.tool_manager
        if isinstance(tm, (list, tuple)):
            if len(tm) != n:
                raise ValueError(f"got {len(tm)} tool managers for {n} trajectories")
            return list(tm)
        return [tm] * n

    def _start(
        self, index: int, traj: Trajectory, tm: ToolManager | None, params: SamplingParams
    ) -> _Run:
        out = copy.deepcopy(traj)
        messages = out["messages"]
        tools = tm.schemas if tm is not None else out.get("tools")
        ids = self.template.encode_messages(messages, tools, add_generation_prompt=True)
        run = _Run(
            index,
            out,
            messages,
            tools or None,
            tm,
            ids,
            [IGNORE_INDEX] * len(ids),
            [] if params.logprobs is not None else None,
        )
        out["prompt_length"] = len(ids)
        cap = self.max_trajectory_tokens
        if cap is not None and len(ids) >= cap:
            # No room to sample even one token: the prompt alone is cut to the cap.
            del run.ids[cap:], run.labels[cap:]
            self._finish(run, "length")
        return run

    def _finish(self, run: _Run, stop_reason: str) -> None:
        run.out.update(
            messages=run.messages,
            input_ids=run.ids,
            labels=run.labels,
            logprobs=run.logprobs,
            turns=run.turns,
            stop_reason=stop_reason,
            truncated=is_truncated(stop_reason),
            tool_errors=run.tool_errors,
        )

    def _fits(self, run: _Run, extra: int) -> bool:
        cap = self.max_trajectory_tokens
        return cap is None or len(run.ids) + extra <= cap

    # -- one turn for all active trajectories ---------------------------------------------
    def _turn(self, active: list[_Run], params: SamplingParams) -> list[_Run]:
        cap = self.max_trajectory_tokens
        per_prompt = [
            params
            if cap is None
            else params.replace(max_tokens=min(params.max_tokens, cap - len(r.ids)))
            for r in active
        ]
        results = self.sampler.sample([list(r.ids) for r in active], per_prompt)
        if len(results) != len(active):
            raise RuntimeError(f"sampler returned {len(results)} results for {len(active)} prompts")
        to_dispatch: list[_Run] = []
        for run, res in zip(active, results, strict=True):
            run.turns += 1
            sampled = list(res.token_ids)
            run.last_sampled = sampled
            run.ids.extend(sampled)
            run.labels.extend(sampled)
            if run.logprobs is not None:
                if res.logprobs is None or len(res.logprobs) != len(sampled):
                    raise RuntimeError("sampler returned no per-token logprobs although asked")
                run.logprobs.extend(res.logprobs)
            body = (
                sampled[:-1] if sampled and sampled[-1] in self.template.stop_token_ids else sampled
            )
            text = self.template.decode(body)
            msg: dict[str, Any] = {"role": "assistant", "content": text}
            history = list(run.messages)
            run.messages.append(msg)
            if res.finish_reason == "length":
                self._finish(run, "length")  # a cut message's tool calls are not run
                continue
            calls = (
                run.tool_manager.parse(text, id_prefix=f"call_{run.turns}_").calls
                if run.tool_manager
                else []
            )
            if not calls:
                self._close(run, history)
                self._finish(run, "stop")
                continue
            msg["tool_calls"] = [c.to_openai() for c in calls]
            run.pending = calls
            to_dispatch.append(run)
        if not to_dispatch:
            return []
        answers = run_sync(self._dispatch(to_dispatch))
        still: list[_Run] = []
        for run, tool_msgs in zip(to_dispatch, answers, strict=True):
            tool_msgs, errors = split_tool_errors(tool_msgs, run.turns)
            last_turn = run.turns >= self.max_turns
            history = run.messages[:-1]
            bridge = self.template.bridge_ids(
                history, tool_msgs, run.last_sampled, run.tools, add_generation_prompt=not last_turn
            )
            # With a generation prompt the next turn must have room for at least one token.
            if not self._fits(run, len(bridge) + (0 if last_turn else 1)):
                self._finish(run, "length")
                continue
            run.messages.extend(tool_msgs)
            run.tool_errors.extend(errors)
            run.ids.extend(bridge)
            run.labels.extend([IGNORE_INDEX] * len(bridge))
            if last_turn:
                self._finish(run, "max_turns")
            else:
                still.append(run)
        return still

    def _close(self, run: _Run, history: list[dict[str, Any]]) -> None:
        """Append the end-of-turn tokens the model did not sample, so ids render the chat."""
        tail = self.template.bridge_ids(
            history, [], run.last_sampled, run.tools, add_generation_prompt=False
        )
        if tail and self._fits(run, len(tail)):
            run.ids.extend(tail)
            run.labels.extend([IGNORE_INDEX] * len(tail))

    @staticmethod
    async def _dispatch(runs: list[_Run]) -> list[list[dict[str, Any]]]:
        # All trajectories' tools run concurrently in one event loop.
        return list(
            await asyncio.gather(
                *(r.tool_manager.dispatch_async(r.pending) for r in runs if r.tool_manager)
            )
        )
