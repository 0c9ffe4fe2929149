"""Per-rollout limits: tokens, turns, wall time, cost and tool calls, checked around every model
call; and what a run passes down to its rollouts for them (the limits and the model's price).

A rollout that reaches a limit ends with a stop reason naming it (``token_limit``,
``turn_limit``, ``time_limit``, ``cost_limit``, ``tool_limit``) and is scored as it stands, as a
truncated rollout is (``length``, ``max_turns``): the rubric sees what it did, no error is set.

When each limit is checked:

- before each model call: ``turns`` (calls made), ``time_s`` (since the rollout started),
  ``cost_usd`` and ``total_tokens`` (prompt plus completion tokens over its calls; the call is
  not made when the tokens left would not cover the next prompt, estimated as the last call's
  prompt plus its answer) and ``tool_calls``; the call's ``max_tokens`` is clipped to the tokens
  the limit leaves after that estimate;
- after each model call: ``turns``, ``total_tokens``, ``cost_usd`` and ``time_s`` (the rollout
  ends there, its answer kept, unless the answer ended it on its own) and ``tool_calls`` (the
  model's calls counted before any of them runs).

The built-in loops (``SingleTurnEnv``, ``MultiTurnEnv``, ``ToolEnv``) end the rollout right
after a call that reached a limit; any other environment (a classic one, one with its own
``rollout``, a program) is stopped at its next model call, where :func:`limit_before_call`
raises :class:`LimitReached`, which the run turns into the stop reason.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.core.pricing import ModelPrice, usage_cost

__all__ = [
    "LIMIT_STOP_REASONS",
    "LimitReached",
    "Limits",
    "RolloutBudget",
    "clip_max_tokens",
    "limit_after_call",
    "limit_before_call",
    "rollout_budget",
    "run_budget",
]

LimitStopReason = Literal["token_limit", "turn_limit", "time_limit", "cost_limit", "tool_limit"]
LIMIT_STOP_REASONS: tuple[LimitStopReason, ...] = (
    "token_limit",
    "turn_limit",
    "time_limit",
    "cost_limit",
    "tool_limit",
)


@dataclass(frozen=True, kw_only=True)
class Limits:
    """What one rollout may spend (None: no limit). Give it to an environment
    (``vf.SingleTurnEnv(..., limits=vf.Limits(turns=5))``) or to a run
    (``evaluate(..., limits=vf.Limits(cost_usd=0.01))``); a run's fields override the
    environment's one by one."""

    total_tokens: int | None = None  #: prompt plus completion tokens over the rollout's calls
    turns: int | None = None  #: model calls
    time_s: float | None = None  #: seconds since the rollout started
    cost_usd: float | None = None  #: US dollars of its calls (needs a priced model)
    tool_calls: int | None = None  #: tool calls the model made

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            _check_limit(f.name, getattr(self, f.name))

    def over(self, base: Limits | None) -> Limits:
        """These limits with ``base``'s filling the fields these leave unset."""
        if base is None:
            return self
        given = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return dataclasses.replace(base, **{k: v for k, v in given.items() if v is not None})

    def to_dict(self) -> dict[str, Any]:
        """The limits that are set, by field name (for a run's metadata)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}

    @property
    def any(self) -> bool:
        return bool(self.to_dict())


def _check_limit(name: str, value: object) -> None:
    """A TypeError or ValueError naming the field when ``value`` is no valid limit."""
    if value is None:
        return
    integral = name in ("total_tokens", "turns", "tool_calls")
    kinds: tuple[type, ...] = (int,) if integral else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds):
        kind = "an int" if integral else "a number"
        raise TypeError(f"Limits.{name} must be {kind} or None, got {value!r}")
    number = float(value) if isinstance(value, (int, float)) else math.nan
    least = 0.0 if name == "tool_calls" else math.ulp(0.0)
    if not math.isfinite(number) or number < least:
        raise ValueError(f"Limits.{name} must be {'>= 0' if least == 0 else '> 0'}, got {value!r}")


class LimitReached(VerifiersError):
    """Raised where a rollout may not go on: the run ends it with stop reason :attr:`reason`
    (no error). Environments that make model calls their own way raise it from
    :func:`limit_before_call` before each call."""

    def __init__(self, reason: LimitStopReason, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason: LimitStopReason = reason


@dataclass(frozen=True)
class RolloutBudget:
    """What a run gives its rollouts: its limits (over the environment's) and the model's price."""

    limits: Limits | None = None
    price: ModelPrice | None = None


_BUDGET: ContextVar[RolloutBudget | None] = ContextVar(
    "verifiers_lite_rollout_budget", default=None
)


@contextlib.contextmanager
def run_budget(budget: RolloutBudget) -> Iterator[None]:
    """Within the block (a run), rollouts see ``budget`` (see :func:`rollout_budget`)."""
    token = _BUDGET.set(budget)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def rollout_budget(env_limits: Limits | None) -> tuple[Limits | None, ModelPrice | None]:
    """A rollout's limits (the run's over the environment's) and its model's price."""
    budget = _BUDGET.get()
    if budget is None:
        return env_limits, None
    limits = budget.limits.over(env_limits) if budget.limits is not None else env_limits
    return limits, budget.price


def _tokens(usage: Mapping[str, Any]) -> int:
    return int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)


def _tool_calls(state: Mapping[str, Any]) -> int:
    """Tool calls in the rollout's assistant turns so far."""
    return sum(
        len(step.get("message", {}).get("tool_calls") or [])
        for step in state.get("trajectory") or []
        if isinstance(step, dict)
    )


def _elapsed(state: Mapping[str, Any]) -> float:
    start = (state.get("timing") or {}).get("start")
    return time.time() - start if isinstance(start, (int, float)) else 0.0


def limit_before_call(
    state: Mapping[str, Any], limits: Limits | None, price: ModelPrice | None
) -> int | None:
    """Raise :class:`LimitReached` when the rollout may not make another model call; else the
    most tokens the call may generate under ``total_tokens`` (None: no token limit)."""
    if limits is None:
        return None
    reached = state.get("limit_reached")
    if reached in LIMIT_STOP_REASONS:
        raise LimitReached(reached, "reached after the last model call")
    turns = len(state.get("trajectory") or ())  # one step per model call, whatever the loop
    if limits.turns is not None and turns >= limits.turns:
        raise LimitReached("turn_limit", f"{turns} model calls of {limits.turns}")
    _check_spent(state, limits, price)
    if limits.tool_calls is not None and _tool_calls(state) > limits.tool_calls:
        raise LimitReached("tool_limit", f"more than {limits.tool_calls} tool calls")
    if limits.total_tokens is None:
        return None
    left = limits.total_tokens - _tokens(state.get("usage") or {}) - _next_prompt(state)
    if left <= 0:
        raise LimitReached(
            "token_limit", f"no tokens left for another call of {limits.total_tokens}"
        )
    return left


def clip_max_tokens(args: dict[str, Any], room: int) -> None:
    """At most ``room`` tokens for the call's answer (the token limit's share left), in the
    sampling arguments ``args``."""
    key = "max_completion_tokens" if "max_completion_tokens" in args else "max_tokens"
    asked = args.get(key)
    args[key] = room if not isinstance(asked, int) else min(asked, room)


def _next_prompt(state: Mapping[str, Any]) -> int:
    """A lower bound on the next call's prompt tokens: the last call's prompt and its answer."""
    last = state.get("last_call_tokens")
    return int(last) if isinstance(last, int) else 0


def _check_spent(state: Mapping[str, Any], limits: Limits, price: ModelPrice | None) -> None:
    """Raise when the rollout's time, cost or tokens have reached their limits."""
    if limits.time_s is not None and (elapsed := _elapsed(state)) >= limits.time_s:
        raise LimitReached("time_limit", f"{elapsed:.3g} s of {limits.time_s:g}")
    if limits.cost_usd is not None:
        cost = usage_cost(state.get("usage") or {}, price)
        if cost is not None and cost >= limits.cost_usd:
            raise LimitReached("cost_limit", f"{cost:.6g} USD of {limits.cost_usd:g}")
    if limits.total_tokens is not None:
        used = _tokens(state.get("usage") or {})
        if used >= limits.total_tokens:
            raise LimitReached("token_limit", f"{used} tokens of {limits.total_tokens}")


def limit_after_call(
    state: dict[str, Any], limits: Limits | None, price: ModelPrice | None
) -> LimitStopReason | None:
    """After a model call: the limit it reached (also kept as ``state["limit_reached"]``, so the
    next call is refused), or None."""
    if limits is None:
        return None
    try:
        _check_spent(state, limits, price)
        turns = len(state.get("trajectory") or ())
        if limits.turns is not None and turns >= limits.turns:
            raise LimitReached("turn_limit", f"{turns} model calls of {limits.turns}")
        if limits.tool_calls is not None and _tool_calls(state) > limits.tool_calls:
            raise LimitReached("tool_limit", f"more than {limits.tool_calls} tool calls")
    except LimitReached as reached:
        state["limit_reached"] = reached.reason
        return reached.reason
    return None
