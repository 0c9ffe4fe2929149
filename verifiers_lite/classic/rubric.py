"""Classic Rubric and RubricGroup with verifiers 0.3.1's scoring semantics.

What differs from verifiers_lite's own :class:`~verifiers_lite.rubrics.rubric.Rubric`:

- Arguments by name: ``prompt, completion, answer, state, info, task`` (the rollout's input
  row), every other column of the input row (``question``...), and the rubric's class objects
  (``parser``, and what :meth:`Rubric.add_class_object` adds, e.g. a judge). A function that
  asks for a name nobody supplies fails, and a failing function scores 0.0 (logged), as in
  classic verifiers; it does not mark the rollout.
- A group reward function is one with a plural parameter (``prompts, completions, answers,
  states, tasks, infos``) or a ``list`` return annotation: called once with lists.
- Metrics are keyed by the function's ``__name__`` (a repeated name keeps the last value);
  ``add_metric`` adds a function of weight 0.
- :class:`RubricGroup` sums its rubrics' rewards and each metric over the rubrics.

Rollouts that ended with an error are not scored (verifiers_lite's rule for error rows).
Messages reach classic functions as verifiers 0.3.1's message models
(:mod:`verifiers_lite.classic.types`) and are plain dicts again after :meth:`Rubric.cleanup`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import weakref
from collections.abc import Callable, Mapping
from typing import Any, cast, get_origin

from verifiers_lite.classic.decorators import discover_decorated
from verifiers_lite.classic.messages import to_plain, upgrade
from verifiers_lite.classic.parsers import Parser
from verifiers_lite.classic.utils import maybe_await, maybe_call_with_named_args
from verifiers_lite.core.dataset import RowFields
from verifiers_lite.core.records import State
from verifiers_lite.rubrics.rubric import Rubric as NativeRubric

GROUP_PARAMETERS = frozenset({"states", "prompts", "completions", "answers", "tasks", "infos"})
TASK_INPUT_FIELDS = frozenset({"prompt", "answer", "info", "example_id"})
_MESSAGE_KEYS = ("prompt", "completion")


_GROUP_FUNCS: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def is_group_func(func: Callable[..., Any]) -> bool:
    """Classic rule: plural parameter names, or a ``list`` return annotation (read once per function)."""
    key = getattr(func, "__func__", func)
    try:
        return _GROUP_FUNCS[key]
    except KeyError:
        pass
    except TypeError:
        key = None
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return False
    annotation = sig.return_annotation
    returns_list = (
        annotation is list
        or get_origin(annotation) is list
        or annotation in ("list", "List[float]")
    )
    group = bool(set(sig.parameters) & GROUP_PARAMETERS) or returns_list
    if key is not None:
        _GROUP_FUNCS[key] = group
    return group


def classic_input(state: Mapping[str, Any]) -> dict[str, Any]:
    """The rollout's input row as classic code sees it (``state["input"]``, else the state's
    input fields)."""
    row = state.get("input")
    if isinstance(row, Mapping):
        return dict(row)
    return {k: state.get(k) for k in TASK_INPUT_FIELDS}


def as_classic_state(state: State) -> State:
    """Upgrade the state's messages (prompt, completion, trajectory) to classic views, in place."""
    for key in _MESSAGE_KEYS:
        upgrade(state.get(key))
    for step in state.get("trajectory") or []:
        for key in _MESSAGE_KEYS:
            upgrade(step.get(key))
    return state


def as_plain_state(state: State) -> State:
    """Turn the classic views back into plain dicts, in place."""
    fields = cast(dict[str, Any], state)  # classic keys beside the typed ones
    for key in _MESSAGE_KEYS:
        if isinstance(fields.get(key), list):
            fields[key] = to_plain(fields[key])
    for i, step in enumerate(fields.get("trajectory") or []):
        fields["trajectory"][i] = to_plain(step)
    return state


class Rubric(NativeRubric):
    """``vf.Rubric(funcs=[...], weights=[...], parser=...)`` with classic semantics (see the module)."""

    def __init__(
        self,
        funcs: list[Callable[..., Any]] | None = None,
        weights: list[float] | None = None,
        parser: Any = None,
        **kwargs: Any,
    ) -> None:
        funcs = list(funcs or [])
        weights = list(weights) if weights else [1.0] * len(funcs)
        if len(weights) != len(funcs):
            raise ValueError(
                f"Number of weights ({len(weights)}) must match number of functions ({len(funcs)})"
            )
        self.logger = logging.getLogger(f"verifiers.rubrics.{type(self).__name__}")
        super().__init__(funcs, weights, parser=parser or Parser())
        self.class_objects: dict[str, Any] = {"parser": self.parser}
        for key, value in kwargs.items():
            setattr(self, key, value)
        self._cleanup_handlers = discover_decorated(self, "cleanup")
        self._teardown_handlers = discover_decorated(self, "teardown")

    def check_reward_funcs(self, rows: RowFields | None = None) -> None:
        """Classic functions are not checked ahead: a missing argument scores 0.0 when called."""

    def add_reward_func(self, func: Callable[..., Any], weight: float = 1.0) -> None:
        self.funcs.append(func)
        self.weights.append(weight)

    def add_metric(self, func: Callable[..., Any], weight: float = 0.0) -> None:
        self.funcs.append(func)
        self.weights.append(weight)

    def add_class_object(self, name: str, obj: Any) -> None:
        self.class_objects[name] = obj

    def _get_reward_func_names(self) -> list[str]:
        return [getattr(f, "__name__", repr(f)) for f in self.funcs]

    def _get_reward_funcs(self) -> list[Callable[..., Any]]:
        return list(self.funcs)

    def _get_reward_weights(self) -> list[float]:
        return list(self.weights)

    @property
    def group_func_names(self) -> list[str]:
        return [n for n, f in zip(self.func_names, self.funcs, strict=True) if is_group_func(f)]

    @property
    def requires_group_rollouts(self) -> bool:
        return any(is_group_func(f) for f in self.funcs)

    @property
    def has_group_rewards(self) -> bool:
        return self.requires_group_rollouts

    def score_objects(self, state: State) -> dict[str, Any]:
        """What a reward function may take by name for one rollout."""
        row = classic_input(state)
        objects = {k: v for k, v in row.items() if k not in TASK_INPUT_FIELDS and k != "task"}
        fields: Mapping[str, Any] = state
        objects.update(
            prompt=fields.get("prompt"),
            completion=fields.get("completion"),
            answer=fields.get("answer", ""),
            state=state,
            info=fields.get("info", {}),
            **self.class_objects,
        )
        objects["task"] = row
        return objects

    def group_score_objects(self, states: list[State]) -> dict[str, Any]:
        """What a group reward function may take by name (lists, one item per rollout)."""
        per_state = [self.score_objects(s) for s in states]
        return {
            "prompts": [o["prompt"] for o in per_state],
            "completions": [o["completion"] for o in per_state],
            "answers": [o["answer"] for o in per_state],
            "states": list(states),
            "tasks": [o["task"] for o in per_state],
            "infos": [o["info"] for o in per_state],
            **self.class_objects,
        }

    async def _score_func(self, func: Callable[..., Any], states: list[State]) -> list[float]:
        name = getattr(func, "__name__", repr(func))
        if is_group_func(func):
            try:
                values = await maybe_call_with_named_args(func, **self.group_score_objects(states))
                return [float(v) for v in values]
            except Exception as exc:  # classic: a failing function scores 0.0
                self.logger.error("Error calling group reward function %s: %s", name, exc)
                return [0.0] * len(states)
        return list(await asyncio.gather(*(self._score_one(func, name, s) for s in states)))

    async def _score_one(self, func: Callable[..., Any], name: str, state: State) -> float:
        try:
            return float(await maybe_call_with_named_args(func, **self.score_objects(state)))
        except Exception as exc:  # classic: a failing function scores 0.0
            self.logger.error("Error calling reward function %s: %s", name, exc)
            return 0.0

    async def score_values(self, states: list[State]) -> tuple[list[float], list[dict[str, float]]]:
        """Each state's reward and metrics by classic rules, without writing them."""
        rewards = [0.0] * len(states)
        metrics: list[dict[str, float]] = [{} for _ in states]
        for func, weight in zip(self.funcs, self.weights, strict=True):
            name = getattr(func, "__name__", repr(func))
            for i, value in enumerate(await self._score_func(func, states)):
                rewards[i] += value * weight
                metrics[i][name] = value
        return rewards, metrics

    async def score_group(self, states: list[State]) -> None:
        """Score the group's rollouts without an error; advantage = reward - the group's mean."""
        for s in states:
            s["reward"] = s["advantage"] = None
        scored = [as_classic_state(s) for s in states if s.get("error") is None]
        if scored:
            rewards, metrics = await self.score_values(scored)
            for state, reward, values in zip(scored, rewards, metrics, strict=True):
                state["reward"], state["metrics"] = reward, dict(values)
        self.compute_advantages(states)
        for s in scored:
            for step in s.get("trajectory") or []:
                if step.get("reward") is None and "prompt" in step:
                    step["reward"], step["advantage"] = s["reward"], s["advantage"]

    async def cleanup(self, state: State) -> None:
        """Run the rubric's ``@vf.cleanup`` handlers, then leave the state's messages plain."""
        try:
            await self.run_cleanup_handlers(state)
        finally:
            as_plain_state(state)

    async def run_cleanup_handlers(self, state: State) -> None:
        """The rubric's ``@vf.cleanup`` handlers, in order."""
        for handler in self._cleanup_handlers:
            await maybe_call_with_named_args(handler, state=state, **self.class_objects)

    async def teardown(self) -> None:
        """Run the rubric's ``@vf.teardown`` handlers."""
        for handler in self._teardown_handlers:
            await maybe_await(handler)


async def _member_values(
    rubric: Any, states: list[State]
) -> tuple[list[float], list[dict[str, float]]]:
    """A group member's rewards and metrics: by :meth:`Rubric.score_values`, or — for a rubric
    with a ``score_group`` of its own — by running it and reading (then restoring) the states."""
    if isinstance(rubric, Rubric) and type(rubric).score_group in (
        Rubric.score_group,
        RubricGroup.score_group,
    ):
        return await rubric.score_values(states)
    kept = [(s.get("reward"), s.get("advantage"), s.get("metrics")) for s in states]
    await rubric.score_group(states)
    values = [
        (
            float(s.get("reward") or 0.0),
            {k: float(v or 0.0) for k, v in (s.get("metrics") or {}).items()},
        )
        for s in states
    ]
    for s, (reward, advantage, metrics) in zip(states, kept, strict=True):
        s["reward"], s["advantage"], s["metrics"] = reward, advantage, metrics or {}
    return [v[0] for v in values], [v[1] for v in values]


class RubricGroup(Rubric):
    """Several rubrics as one: rewards add up, each metric is summed over the rubrics."""

    def __init__(self, rubrics: list[Rubric], **kwargs: Any) -> None:
        if not rubrics:
            raise ValueError("RubricGroup must have at least one rubric")
        self.rubrics = list(rubrics)
        super().__init__(**kwargs)

    @property  # type: ignore[override]
    def funcs(self) -> list[Callable[..., Any]]:
        return [f for r in getattr(self, "rubrics", []) for f in r.funcs]

    @funcs.setter
    def funcs(self, value: list[Callable[..., Any]]) -> None:
        if value:
            raise ValueError(
                "RubricGroup has no functions of its own: add them to one of its rubrics"
            )

    @property  # type: ignore[override]
    def weights(self) -> list[float]:
        return [w for r in getattr(self, "rubrics", []) for w in r.weights]

    @weights.setter
    def weights(self, value: list[float]) -> None:
        pass  # its rubrics' weights are the group's

    def add_reward_func(self, func: Callable[..., Any], weight: float = 1.0) -> None:
        self.rubrics[0].add_reward_func(func, weight)

    def add_metric(self, func: Callable[..., Any], weight: float = 0.0) -> None:
        self.rubrics[0].add_metric(func, weight)

    def add_class_object(self, name: str, obj: Any) -> None:
        self.rubrics[0].add_class_object(name, obj)

    async def score_values(self, states: list[State]) -> tuple[list[float], list[dict[str, float]]]:
        rewards = [0.0] * len(states)
        metrics: list[dict[str, float]] = [{} for _ in states]
        for rubric in self.rubrics:
            part_rewards, part_metrics = await _member_values(rubric, states)
            for i, (reward, values) in enumerate(zip(part_rewards, part_metrics, strict=True)):
                rewards[i] += reward
                for name, value in values.items():
                    metrics[i][name] = metrics[i].get(name, 0.0) + value
        return rewards, metrics

    async def run_cleanup_handlers(self, state: State) -> None:
        """The group's own handlers, then each rubric's (the state is made plain once, after all)."""
        await super().run_cleanup_handlers(state)
        for rubric in self.rubrics:
            if isinstance(rubric, Rubric):
                await rubric.run_cleanup_handlers(state)
            else:
                await rubric.cleanup(state)

    async def teardown(self) -> None:
        await super().teardown()
        for rubric in self.rubrics:
            await rubric.teardown()
