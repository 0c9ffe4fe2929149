"""One rollout's side of the interception endpoint: its token, client, limits and captured calls.

The rollout's :class:`~verifiers_lite.core.limits.Limits` are checked around every call as for
any environment: a call the limits do not allow is answered with an error naming the limit
(``turn_limit``, ``token_limit``, ``time_limit``, ``cost_limit``, ``tool_limit``), and the
rollout then ends with that stop reason; a call's ``max_tokens`` is clipped to the tokens the
limit leaves.
"""

from __future__ import annotations

import asyncio
import contextvars
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.clients.model_turn import model_turn
from verifiers_lite.core.errors import ModelAPIError
from verifiers_lite.core.limits import (
    LimitReached,
    Limits,
    clip_max_tokens,
    limit_after_call,
    limit_before_call,
)
from verifiers_lite.core.messages import Message
from verifiers_lite.core.model_client import ChatResponse, ModelClient
from verifiers_lite.core.pricing import ModelPrice, usage_cost
from verifiers_lite.core.reasoning import assistant_message
from verifiers_lite.programs.capture import CallLog

__all__ = ["PROGRAM_FIELDS", "CallRefused", "RolloutSession"]

PROGRAM_FIELDS = (
    "temperature",
    "top_p",
    "max_tokens",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "tool_choice",
    "parallel_tool_calls",
    "response_format",
    "logprobs",
    "top_logprobs",
)
"""The request fields a program may set (``max_completion_tokens`` is read as ``max_tokens``);
the environment's sampling arguments override any of them, and other fields are dropped."""


class CallRefused(VerifiersError):
    """A call answered with an error instead of a turn: ``status``, ``code``, ``message``."""

    def __init__(self, status: int, code: str, message: str, stop: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.stop = stop  # the stop reason to end the rollout with, once the answer is sent


@dataclass
class RolloutSession:
    """What the endpoint knows of one rollout; calls made with its ``token`` reach it only."""

    client: ModelClient
    model: str
    sampling_args: dict[str, Any]
    limits: Limits | None
    context: contextvars.Context
    price: ModelPrice | None = None
    started_at: float = field(default_factory=time.time)  #: the rollout's start (``time.time()``)
    token: str = field(default_factory=lambda: "vfp-" + secrets.token_urlsafe(24))
    log: CallLog = field(default_factory=CallLog)
    stop: asyncio.Future[str] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    program_models: list[str] = field(default_factory=list)
    model_error: ModelAPIError | None = None
    in_flight: set[asyncio.Task[ChatResponse]] = field(default_factory=set)
    started: float = field(default_factory=time.perf_counter)
    limit_reached: str | None = None  #: the limit the last call reached (the next is refused)
    refused: str | None = None  #: the limit a refused call named: the rollout's stop reason

    def end(self, reason: str) -> None:
        """Stop the program (the rollout then ends with ``reason``); the first reason wins."""
        if not self.stop.done():
            self.stop.set_result(reason)

    def cancel_calls(self) -> None:
        """Cancel the model calls still in flight (the program is gone: nobody reads them)."""
        for task in list(self.in_flight):
            task.cancel()

    def spent(self) -> dict[str, Any]:
        """What the rollout has spent, as the limit checks read a State: every call, usage,
        its start, the last call's tokens and the limit that call reached."""
        log = self.log
        spent: dict[str, Any] = {
            "trajectory": log.steps,
            "usage": {
                "prompt_tokens": log.prompt_tokens,
                "completion_tokens": log.completion_tokens,
            },
            "timing": {"start": self.started_at},
        }
        if log.steps:
            usage = log.steps[-1]["usage"]
            spent["last_call_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if self.limit_reached is not None:
            spent["limit_reached"] = self.limit_reached
        return spent

    def cost_usd(self) -> float | None:
        """What the calls cost (None: the model has no price)."""
        return usage_cost(self.spent()["usage"], self.price) if self.price is not None else None

    def _check_limits(self) -> int | None:
        """Refuse the call when the rollout has ended or a limit does not allow it; else the
        most tokens it may generate (None: no token limit)."""
        if self.stop.done():
            reason = str(self.stop.result())
            raise CallRefused(
                400, reason, f"this rollout has ended ({reason}): no more model calls"
            )
        try:
            return limit_before_call(self.spent(), self.limits, self.price)
        except LimitReached as reached:
            # Named now, before the answer goes out: the program may exit on it at once.
            self.refused = self.refused or reached.reason
            raise CallRefused(
                400, reached.reason, f"per-rollout limit reached: {reached}", stop=reached.reason
            ) from None

    def sampling_for(self, requested: dict[str, Any]) -> dict[str, Any]:
        """The program's allowed fields, then the environment's sampling arguments over them."""
        wanted = dict(requested)
        if "max_completion_tokens" in wanted:
            wanted.setdefault("max_tokens", wanted.pop("max_completion_tokens"))
        own = {k: wanted[k] for k in PROGRAM_FIELDS if wanted.get(k) is not None}
        return {**own, **self.sampling_args}

    async def call(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]] | None,
        requested: dict[str, Any],
        meta: dict[str, Any],
    ) -> ChatResponse:
        """Forward one call to the run's client (in the rollout's own context), capture it."""
        room = self._check_limits()
        name = str(meta.get("program_model") or "")
        if name and name not in self.program_models:
            self.program_models.append(name)
        args = self.sampling_for(requested)
        if room is not None:
            clip_max_tokens(args, room)
        index = len(self.log.steps)
        t0 = time.perf_counter()
        # A copy per call: one context can run in one task at a time, and a program may call
        # again before an earlier call has been answered.
        task = asyncio.get_running_loop().create_task(
            self._chat(index, messages, tools, args), context=self.context.copy()
        )
        self.in_flight.add(task)
        try:
            response = await task
        except ModelAPIError as exc:
            self.model_error = self.model_error or exc
            raise CallRefused(502, exc.category, f"model call failed: {exc}") from exc
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and not (current is not None and current.cancelling()):
                # Cancelled by cancel_calls: the rollout ended while the model was answering.
                raise CallRefused(400, "rollout_ended", "the rollout has ended") from None
            raise
        finally:
            self.in_flight.discard(task)
        meta = {
            **meta,
            "timing": {
                "start_ms": (t0 - self.started) * 1000,
                "latency_ms": (time.perf_counter() - t0) * 1000,
            },
        }
        self.log.record(messages, tools, args, response, meta)
        spent = self.spent()
        self.limit_reached = limit_after_call(spent, self.limits, self.price)
        return response

    async def _chat(
        self,
        index: int,
        messages: list[Message],
        tools: list[dict[str, Any]] | None,
        args: dict[str, Any],
    ) -> ChatResponse:
        with model_turn(index, self.limits.turns if self.limits is not None else None):
            response = await self.client.chat(self.model, messages, args or None, tools)
        response.message = assistant_message(response.message)
        return response
