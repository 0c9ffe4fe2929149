"""Rubric: weighted reward functions -> reward, per-function metrics, group advantages."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from verifiers_lite.core.dataset import RowFields
from verifiers_lite.core.errors import RewardFunctionError, categorize
from verifiers_lite.core.pass_criterion import PassCriterion
from verifiers_lite.core.records import State
from verifiers_lite.parsers.parser import Parser
from verifiers_lite.rubrics.score import Score

RewardFunc = Callable[..., Any]
ROLLOUT_ARGS = ("prompt", "completion", "answer", "state", "info", "task", "example_id")


def group_reward(func: RewardFunc) -> RewardFunc:
    """Mark ``func`` as group-level: it is called once per group with *lists* (one item per
    rollout) under the usual argument names, and returns a list of floats."""
    func.__vf_group_reward__ = True  # type: ignore[attr-defined]
    return func


def is_group_reward(func: RewardFunc) -> bool:
    return bool(getattr(func, "__vf_group_reward__", False))


def check_reward_params(func: RewardFunc, name: str, available: Sequence[str]) -> None:
    """Refuse a reward function that needs an argument the rubric cannot supply (a misspelled
    ``completoin``): ValueError naming the function, the parameter and the names available.
    Parameters with a default, ``*args`` and ``**kwargs`` are fine."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: nothing to check
        return
    for p in params:
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if p.kind is inspect.Parameter.POSITIONAL_ONLY or (
            p.default is inspect.Parameter.empty and p.name not in available
        ):
            kind = (
                "positional-only parameter"
                if p.kind is inspect.Parameter.POSITIONAL_ONLY
                else "parameter"
            )
            raise ValueError(
                f"reward function {name!r} has {kind} {p.name!r}, which the rubric cannot supply; "
                f"reward functions take any of {', '.join(available)} by name (or **kwargs)"
            )


ROW_SUPPLIED = ("answer", "info")
"""Reward function arguments only the dataset's rows give a value (the rest the rollout has)."""


def check_rows_supply(func: RewardFunc, name: str, rows: RowFields) -> None:
    """Refuse ``func`` when it takes, without a default, a row field (``answer``, ``info``)
    that no row of the run supplies: ValueError naming the function, the parameter and the
    columns found."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return
    for p in params:
        needed = p.name in ROW_SUPPLIED and p.default is inspect.Parameter.empty
        if needed and not rows.supplies(p.name):
            raise ValueError(
                f"reward function {name!r} takes {p.name!r}, but no row of the run's inputs "
                f"has a value for it (columns found: {', '.join(rows.columns) or 'none'}). "
                f"Add a column {p.name!r}, or give the parameter a default "
                f"({p.name}=None) to score without it"
            )


def accepted_names(func: RewardFunc) -> frozenset[str] | None:
    """The argument names ``func`` takes by name; None when it takes ``**kwargs`` (all of them).
    Raises TypeError/ValueError for a callable without a signature."""
    params = inspect.signature(func).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return frozenset(params)


async def _call(func: RewardFunc, kwargs: dict[str, Any]) -> Any:
    result = func(**kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


def _as_float(value: Any, name: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise RewardFunctionError(
            f"reward function {name!r} returned {value!r}, not a number"
        ) from exc


def _scored(state: State, name: str, value: Any) -> float:
    """``value`` as a number; a :class:`Score`'s explanation kept on ``state`` under ``name``."""
    if isinstance(value, Score) and value.explanation is not None:
        explanations: dict[str, str] = state.setdefault("explanations", {})
        explanations[name] = str(value.explanation)
    return _as_float(value, name)


def unique_names(funcs: Sequence[RewardFunc]) -> list[str]:
    """One metric name per function: its ``__name__``, suffixed ``_2``, ``_3``... when taken
    (two lambdas are ``<lambda>`` and ``<lambda>_2``), so no function's value overwrites another's."""
    names: list[str] = []
    for i, f in enumerate(funcs):
        base = getattr(f, "__name__", None) or f"reward_{i}"
        name, n = base, 1
        while name in names:
            n += 1
            name = f"{base}_{n}"
        names.append(name)
    return names


class Rubric:
    """A set of reward functions with weights.

    Reward functions may be sync or async and take any subset of ``prompt, completion, answer,
    state, info, task, example_id, parser`` by name, and return a number or a
    :class:`~verifiers_lite.rubrics.score.Score` (a number and why: kept in
    ``row["explanations"]``). Every function's value is kept as a metric
    (named after the function; repeated names get ``_2``, ``_3``...); the reward is their
    weighted sum. Only rollouts without an error are scored: an errored rollout keeps reward,
    advantage and metrics unset, and group advantages are taken over the scored rollouts. A
    function that raises marks the rollout with a ``rubric_error`` (its metric None, no reward).

    ``pass_criterion`` says when a rollout counts as solved for pass@k: a threshold on the reward
    (a number), a metric name (passes at >= 1.0), or a :class:`PassCriterion`; default reward >= 1.

    Args:
        funcs: the reward functions.
        weights: each function's weight in the reward (default 1.0 each).
        parser: what reads the answer out of a completion, given to functions taking ``parser``
            (default: the environment's).
        pass_criterion: when a rollout counts as solved (above).
    """

    task_rubrics: Mapping[str, Rubric] = MappingProxyType({})
    """An environment group's rubric of each task (a plain rubric has none)."""

    def __init__(
        self,
        funcs: Sequence[RewardFunc] | None = None,
        weights: Sequence[float] | None = None,
        parser: Parser | None = None,
        *,
        pass_criterion: PassCriterion | str | float | None = None,
    ) -> None:
        funcs = list(funcs or [])
        weights = list(weights) if weights is not None else [1.0] * len(funcs)
        if len(weights) != len(funcs):
            raise ValueError(f"Rubric got {len(funcs)} reward functions but {len(weights)} weights")
        for f in funcs:
            if not callable(f):
                raise TypeError(f"reward function {f!r} is not callable")
        self.funcs: list[RewardFunc] = funcs
        self.weights: list[float] = [float(w) for w in weights]
        self.parser = parser or Parser()
        self.check_reward_funcs()
        self.pass_criterion = PassCriterion.coerce(pass_criterion)
        if funcs and self.pass_criterion.metric not in ("reward", *self.func_names):
            raise ValueError(
                f"pass_criterion names metric {self.pass_criterion.metric!r}, but the rubric's metrics "
                f"are {self.func_names}"
            )

    def add_reward_func(self, func: RewardFunc, weight: float = 1.0) -> None:
        """Add a reward function after construction (its parameters checked now, as at construction)."""
        if not callable(func):
            raise TypeError(f"reward function {func!r} is not callable")
        check_reward_params(func, unique_names([*self.funcs, func])[-1], self.argument_names)
        self.funcs.append(func)
        self.weights.append(float(weight))

    def fingerprint_extra(self) -> dict[str, Any] | None:
        """What else decides this rubric's scores besides its functions, parser and weights (a
        judge's model and prompt), for the run fingerprint; None for a plain rubric."""
        return None

    @property
    def argument_names(self) -> tuple[str, ...]:
        """The names a reward function may take (what :meth:`_available` supplies)."""
        return (*ROLLOUT_ARGS, "parser")

    def check_reward_funcs(self, rows: RowFields | None = None) -> None:
        """ValueError when a reward function takes a parameter the rubric cannot supply; run at
        construction and again before a run's first request (``funcs`` may have been edited),
        then with the run's ``rows``: a parameter without a default that no row gives a value
        (``answer``, ``info``) is refused too, rather than scored against ``""``.
        Each function's accepted names are kept for scoring (read once, not per call)."""
        self._accepts: dict[int, tuple[RewardFunc, frozenset[str] | None]] = {}
        for func, name in zip(self.funcs, self.func_names, strict=True):
            check_reward_params(func, name, self.argument_names)
            if rows is not None:
                check_rows_supply(func, name, rows)
            with contextlib.suppress(TypeError, ValueError):  # no signature: it fails when called
                self._accepts[id(func)] = (func, accepted_names(func))

    def _kwargs_for(self, func: RewardFunc, available: dict[str, Any]) -> dict[str, Any]:
        """The arguments of ``available`` that ``func`` takes (its names read once per function)."""
        cache = self.__dict__.setdefault("_accepts", {})
        entry = cache.get(id(func))
        if entry is None or entry[0] is not func:  # added since the check (or an id reused)
            entry = cache[id(func)] = (func, accepted_names(func))
        names = entry[1]
        return available if names is None else {k: v for k, v in available.items() if k in names}

    @property
    def func_names(self) -> list[str]:
        """The metric name of each function, unique (see :func:`unique_names`)."""
        return unique_names(self.funcs)

    @property
    def group_func_names(self) -> list[str]:
        """Metric names of the group reward functions (they score a whole group at once)."""
        return [n for n, f in zip(self.func_names, self.funcs, strict=True) if is_group_reward(f)]

    @property
    def requires_group_rollouts(self) -> bool:
        """True when a group reward function needs the scheduler to run rollouts in groups."""
        return any(is_group_reward(f) for f in self.funcs)

    def _available(self, state: State) -> dict[str, Any]:
        fields: Mapping[str, Any] = state  # read by name
        args = {k: fields.get(k) for k in ROLLOUT_ARGS if k != "state"}
        args["state"] = state
        args["parser"] = self.parser
        return args

    async def score_rollout(self, state: State) -> None:
        """Score one rollout alone (group-level functions see a group of one)."""
        await self.score_group([state])

    async def score_group(self, states: list[State]) -> None:
        """Score a group: sets reward, metrics and advantage (reward - mean of the group's scored
        rewards) on each state. Errored rollouts are not scored: reward and advantage None."""
        names = self.func_names
        for s in states:
            s["reward"] = s["advantage"] = None
            s.pop("explanations", None)  # a re-score explains its own scores
        scored = [s for s in states if s.get("error") is None]
        values: list[dict[str, float | None]] = [{} for _ in scored]
        for func, name in zip(self.funcs, names, strict=True):
            if not scored:
                break
            if is_group_reward(func):
                await self._score_group_func(func, name, scored, values)
            else:
                for v, r in zip(values, await self._score_each(func, name, scored), strict=True):
                    v[name] = r
        for state, metrics in zip(scored, values, strict=True):
            state["metrics"] = {**(state.get("metrics") or {}), **metrics}
            if state.get("error") is None:
                state["reward"] = sum(
                    w * float(metrics[n] or 0.0) for w, n in zip(self.weights, names, strict=True)
                )
        self.compute_advantages(states)

    @staticmethod
    def compute_advantages(states: list[State]) -> None:
        """advantage = reward - mean reward of the group's scored rollouts (None when unscored)."""
        rewards = [r for s in states if (r := s.get("reward")) is not None]
        mean = sum(rewards) / len(rewards) if rewards else 0.0
        for s in states:
            reward = s.get("reward")
            s["advantage"] = reward - mean if reward is not None else None

    async def _score_each(
        self, func: RewardFunc, name: str, states: list[State]
    ) -> list[float | None]:
        """``func``'s score of each state (None where it failed, the error recorded there). A
        plain function is called in turn; the awaitables an async one returns are awaited
        together (a task each only for those: most reward functions never wait)."""
        results: list[float | None] = [None] * len(states)
        waiting: dict[int, Any] = {}
        for k, state in enumerate(states):
            try:
                value = func(**self._kwargs_for(func, self._available(state)))
                if inspect.isawaitable(value):
                    waiting[k] = self._settle(value, name, state)
                else:
                    results[k] = _scored(state, name, value)
            except Exception as exc:
                _record_rubric_error(state, name, exc)
        if waiting:
            for k, r in zip(waiting, await asyncio.gather(*waiting.values()), strict=True):
                results[k] = r
        return results

    @staticmethod
    async def _settle(value: Any, name: str, state: State) -> float | None:
        try:
            return _scored(state, name, await value)
        except Exception as exc:
            _record_rubric_error(state, name, exc)
            return None

    async def _score_group_func(
        self,
        func: RewardFunc,
        name: str,
        states: list[State],
        values: list[dict[str, float | None]],
    ) -> None:
        available = [self._available(s) for s in states]
        lists: dict[str, Any] = (
            {k: [a[k] for a in available] for k in available[0]} if available else {}
        )
        lists["parser"] = self.parser
        try:
            result = await _call(func, self._kwargs_for(func, lists))
            result = list(result)
            if len(result) != len(states):
                raise RewardFunctionError(
                    f"group reward function {name!r} returned {len(result)} values for {len(states)} rollouts"
                )
            for s, v, r in zip(states, values, result, strict=True):
                v[name] = _scored(s, name, r)
        except Exception as exc:
            for s, v in zip(states, values, strict=True):
                _record_rubric_error(s, name, exc)
                v[name] = None

    async def cleanup(self, state: State) -> None:
        """Hook run after scoring (release per-rollout resources). Default: nothing."""


def _record_rubric_error(state: State, name: str, exc: BaseException) -> None:
    if state.get("error") is None:
        err = categorize(exc)
        err["category"] = "rubric_error"
        err["message"] = f"reward function {name!r} raised {err['message']}"
        state["error"] = err
