"""``MultiTurnRollout``: batched, token-level multi-turn rollouts with tools.

Each turn every active trajectory's ids go to ONE ``sampler.sample`` call; sampled ids are
appended verbatim (labels = ids), tool calls are dispatched, and the template's bridge tokens
(end-of-turn separator, tool turns, generation prompt) are appended with label -100. A failure
(sampler, template, tools, a prompt that does not fit) ends only its own trajectory.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from verifiers_lite._util.sync import run_sync
from verifiers_lite.core.content import text_only
from verifiers_lite.core.errors import ModelAPIError, categorize
from verifiers_lite.core.records import ErrorRecord, FailedToolCall, TokenFields
from verifiers_lite.core.tracebacks import traceback_key

from .sampling import Sampler, SampleResult, SamplingParams, sample_isolated
from .template import TEXT_ONLY, Template
from .tool_manager import ParsedToolCall, ToolManager
from .traces import SuccessCallback, TraceCallback, write_traces
from .trajectory import StopReason, Trajectory, as_trajectory, is_truncated

__all__ = ["IGNORE_INDEX", "MultiTurnRollout", "split_tool_errors"]

IGNORE_INDEX = -100
logger = logging.getLogger(__name__)


def split_tool_errors(
    tool_msgs: list[dict[str, Any]], turn: int
) -> tuple[list[dict[str, Any]], list[FailedToolCall]]:
    """Tool messages without the ToolManager's ``error`` and ``traceback`` keys, and those keys
    as records."""
    clean: list[dict[str, Any]] = []
    errors: list[FailedToolCall] = []
    for m in tool_msgs:
        m = dict(m)
        err = m.pop("error", None)
        where = m.pop("traceback", None)
        if err:
            failed: FailedToolCall = {
                "turn": turn,
                "tool_call_id": m["tool_call_id"],
                "name": m.get("name"),
                "error": err,
            }
            if where is not None:
                failed["traceback"], failed["traceback_id"] = where, traceback_key(where)
            errors.append(failed)
        clean.append(m)
    return clean, errors


def _token_fields(
    ids: list[int], labels: list[int], logprobs: list[float] | None, prompt_length: int
) -> TokenFields:
    """The trajectory's ids laid out as a row's (what ``build_training_batch`` reads): the first
    prompt, then every later token with mask 1 where the model sampled it (its label is not -100)
    and its logprob there (0.0 on bridge tokens, and everywhere when none were asked for)."""
    completion = ids[prompt_length:]
    mask = [int(label != IGNORE_INDEX) for label in labels[prompt_length:]]
    sampled = iter(logprobs or [])
    lps = [float(next(sampled, 0.0)) if m else 0.0 for m in mask]
    return {
        "prompt_ids": ids[:prompt_length],
        "completion_ids": completion,
        "completion_mask": mask,
        "completion_logprobs": lps,
    }


def _failure(where: str, exc: BaseException) -> ErrorRecord:
    """``exc`` as a row's error record (:func:`categorize`: a sampler's ``ModelAPIError`` keeps
    its category, other code's exceptions are ``env_error``), its message headed by where the
    trajectory failed."""
    error = categorize(exc)
    error["message"] = f"{where}: {error['message']}"[:2000]
    return error


@dataclass
class _TrajectoryInFlight:
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
    tool_errors: list[FailedToolCall] = field(default_factory=list)
    pending: list[ParsedToolCall] = field(default_factory=list)
    last_sampled: list[int] = field(default_factory=list)


class MultiTurnRollout:
    """Batched multi-turn rollout engine over a token-level :class:`Sampler`.

    Calling it with a list of trajectories (dicts with ``messages``) returns as many, in order,
    each a copy of its input plus ``messages``, its token ids laid out as an output row's
    (``prompt_ids``, ``completion_ids``, ``completion_mask`` with 1 on sampled tokens,
    ``completion_logprobs`` with 0.0 on the others and everywhere when none were asked for),
    ``prompt_length``, ``turns``, ``stop_reason``, ``truncated``, ``tool_errors`` and ``error``
    (:class:`~verifiers_lite.core.records.Trajectory`). Inputs are never mutated. The training view
    (``input_ids``, unshifted ``labels``, per-position ``logprobs``, ``attention_mask``,
    ``position_ids``) is :func:`~verifiers_lite.rollout.training.training_view` of a trajectory,
    or :func:`~verifiers_lite.rollout.training.build_training_batch` of many.

    ``max_trajectory_tokens`` (and the sampler's ``max_context_tokens``) cap the trajectory's
    tokens: each turn's ``max_tokens`` shrinks to the remaining budget and a bridge
    that would overflow ends the trajectory (``length``). A prompt with no room for one sampled
    token is refused (``error`` category ``prompt_too_long``), never cut. A trajectory whose
    sampling, tools or template fail ends with ``stop_reason='error'`` and a categorised
    :class:`~verifiers_lite.core.records.ErrorRecord` in ``error``; the others go on. Trace
    files that cannot be written are logged and counted in ``trace_errors``.
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
        self.trace_errors = 0  # traces not written (callback raised, directory not writable)

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
        for i, t in enumerate(trajectories):  # an image is refused before anything is sampled
            text_only(as_trajectory(t)["messages"], f"trajectory {i}, field 'messages'", TEXT_ONLY)
        runs = [
            self._start(i, as_trajectory(t), managers[i], params)
            for i, t in enumerate(trajectories)
        ]
        active = [r for r in runs if "stop_reason" not in r.out]
        while active:
            active = self._turn(active, params)
        results = [r.out for r in runs]
        if self.trace_dir is not None:
            self.trace_errors += write_traces(
                self.trace_dir, results, self.trace_callback, self.success_callback
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

    def _limit(self) -> int | None:
        """The most tokens a trajectory may hold: the cap and the sampler's context window."""
        limits = [self.max_trajectory_tokens, getattr(self.sampler, "max_context_tokens", None)]
        known = [int(x) for x in limits if x is not None]
        return min(known) if known else None

    def _start(
        self, index: int, traj: Trajectory, tm: ToolManager | None, params: SamplingParams
    ) -> _TrajectoryInFlight:
        out = copy.deepcopy(traj)
        messages = out["messages"]
        tools = tm.schemas if tm is not None else out.get("tools")
        run = _TrajectoryInFlight(index, out, messages, tools or None, tm, [], [], None)
        if params.logprobs is not None:
            run.logprobs = []
        try:
            ids = self.template.encode_messages(messages, tools, add_generation_prompt=True)
        except Exception as e:  # a template that cannot render this conversation
            out["prompt_length"] = 0
            error = _failure("prompt could not be rendered", e)
            error["category"] = "env_error"  # whatever it raised, the template is the env's
            self._fail(run, error)
            return run
        out["prompt_length"] = len(ids)
        limit = self._limit()
        if limit is not None and len(ids) + 1 > limit:
            # Refused, not cut: a cut prompt has no trainable token and misleads the trainer.
            self._fail(run, self._too_long(len(ids)))
            return run
        run.ids, run.labels = ids, [IGNORE_INDEX] * len(ids)
        return run

    def _too_long(self, n: int) -> ErrorRecord:
        cap = self.max_trajectory_tokens
        ctx = getattr(self.sampler, "max_context_tokens", None)
        limits = ", ".join(
            f"{name}={v}"
            for name, v in (("max_trajectory_tokens", cap), ("sampler context", ctx))
            if v is not None
        )
        message = f"prompt of {n} tokens leaves no room to sample ({limits})"
        return {"category": "prompt_too_long", "message": message}

    def _fail(self, run: _TrajectoryInFlight, error: ErrorRecord) -> None:
        logger.warning(
            "trajectory %d failed (%s): %s", run.index, error["category"], error["message"]
        )
        self._finish(run, "error", error)

    def _finish(
        self, run: _TrajectoryInFlight, stop_reason: StopReason, error: ErrorRecord | None = None
    ) -> None:
        # The row's token layout is the only one stored: the training view (input_ids, labels,
        # per-position logprobs, masks) is derived by training_view / build_training_batch.
        run.out.update(_token_fields(run.ids, run.labels, run.logprobs, run.out["prompt_length"]))
        run.out.update(
            {
                "messages": run.messages,
                "turns": run.turns,
                "stop_reason": stop_reason,
                "truncated": is_truncated(stop_reason),
                "tool_errors": run.tool_errors,
                "error": error,
            }
        )

    def _fits(self, run: _TrajectoryInFlight, extra: int) -> bool:
        limit = self._limit()
        return limit is None or len(run.ids) + extra <= limit

    # -- one turn for all active trajectories ---------------------------------------------
    def _turn(
        self, active: list[_TrajectoryInFlight], params: SamplingParams
    ) -> list[_TrajectoryInFlight]:
        limit = self._limit()
        per_prompt = [
            params
            if limit is None
            else params.replace(max_tokens=min(params.max_tokens, limit - len(r.ids)))
            for r in active
        ]
        results = sample_isolated(self.sampler, [list(r.ids) for r in active], per_prompt)
        to_dispatch: list[_TrajectoryInFlight] = []
        for run, res in zip(active, results, strict=True):
            if isinstance(res, Exception):
                self._fail(run, _failure("sampler failed", res))
                continue
            turn = run.turns + 1  # the model turn this sample makes (1-based)
            try:
                if self._take(run, res):
                    to_dispatch.append(run)
            except Exception as e:  # this trajectory only
                self._fail(run, _failure(f"turn {turn} failed", e))
        if not to_dispatch:
            return []
        answers = run_sync(self._dispatch(to_dispatch))
        still: list[_TrajectoryInFlight] = []
        for run, tool_msgs in zip(to_dispatch, answers, strict=True):
            try:
                if isinstance(tool_msgs, BaseException):
                    raise tool_msgs
                if self._bridge(run, tool_msgs):
                    still.append(run)
            except Exception as e:  # this trajectory only
                self._fail(run, _failure(f"tool turn {run.turns} failed", e))
        return still

    def _take(self, run: _TrajectoryInFlight, res: SampleResult) -> bool:
        """Append one sampled turn; True when its tool calls are to be dispatched."""
        sampled = list(res.token_ids)
        if run.logprobs is not None and (res.logprobs is None or len(res.logprobs) != len(sampled)):
            raise ModelAPIError(
                f"sampler returned {None if res.logprobs is None else len(res.logprobs)} "
                f"logprobs for {len(sampled)} sampled tokens",
                category="model_bad_response",
            )
        run.turns += 1
        run.last_sampled = sampled
        run.ids.extend(sampled)
        run.labels.extend(sampled)
        if run.logprobs is not None and res.logprobs is not None:
            run.logprobs.extend(float(x) for x in res.logprobs)
        stops = self.template.stop_token_ids
        body = sampled[:-1] if sampled and sampled[-1] in stops else sampled
        text = self.template.decode(body)
        msg: dict[str, Any] = {"role": "assistant", "content": text}
        history = list(run.messages)
        run.messages.append(msg)
        if res.finish_reason == "length":
            self._finish(run, "length")  # a cut message's tool calls are not run
            return False
        calls = (
            run.tool_manager.parse(text, id_prefix=f"call_{run.turns}_").calls
            if run.tool_manager
            else []
        )
        if not calls:
            self._close(run, history)
            self._finish(run, "stop")
            return False
        msg["tool_calls"] = [c.to_openai() for c in calls]
        run.pending = calls
        return True

    def _bridge(self, run: _TrajectoryInFlight, answers: list[dict[str, Any]]) -> bool:
        """Append the tool answers' bridge; True when the trajectory samples another turn."""
        tool_msgs, errors = split_tool_errors(answers, run.turns)
        last_turn = run.turns >= self.max_turns
        history = run.messages[:-1]
        bridge = self.template.bridge_ids(
            history, tool_msgs, run.last_sampled, run.tools, add_generation_prompt=not last_turn
        )
        # With a generation prompt the next turn must have room for at least one token.
        if not self._fits(run, len(bridge) + (0 if last_turn else 1)):
            self._finish(run, "length")
            return False
        run.messages.extend(tool_msgs)
        run.tool_errors.extend(errors)
        run.ids.extend(bridge)
        run.labels.extend([IGNORE_INDEX] * len(bridge))
        if last_turn:
            self._finish(run, "max_turns")
            return False
        return True

    def _close(self, run: _TrajectoryInFlight, history: list[dict[str, Any]]) -> None:
        """Append the end-of-turn tokens the model did not sample, so ids render the chat."""
        tail = self.template.bridge_ids(
            history, [], run.last_sampled, run.tools, add_generation_prompt=False
        )
        if tail and self._fits(run, len(tail)):
            run.ids.extend(tail)
            run.labels.extend([IGNORE_INDEX] * len(tail))

    @staticmethod
    async def _dispatch(runs: list[_TrajectoryInFlight]) -> list[Any]:
        # All trajectories' tools run concurrently in one event loop; one failing dispatch
        # comes back as its exception and fails only its trajectory.
        return list(
            await asyncio.gather(
                *(r.tool_manager.dispatch_async(r.pending) for r in runs if r.tool_manager),
                return_exceptions=True,
            )
        )
