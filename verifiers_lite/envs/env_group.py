"""EnvGroup: one environment over several — a training mixture or a multi-benchmark eval in one call.

The group's dataset is its members' datasets concatenated, each row tagged with its member's name
in ``task`` and given an example id unique across the group. Each rollout is run by the member
its ``task`` names and scored by that member's rubric, so rewards, metrics and pass criteria are
exactly what the member alone would give.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from verifiers_lite.core.dataset import RolloutInput, RowFields, complete_input
from verifiers_lite.core.model_client import ModelClient
from verifiers_lite.core.pass_criterion import PassCriterion
from verifiers_lite.core.records import DatasetRow
from verifiers_lite.core.state import State
from verifiers_lite.envs.environment import Environment
from verifiers_lite.rubrics.rubric import Rubric

PASSED_METRIC = "task_passed"


class EnvGroupRubric(Rubric):
    """Scores each state with the rubric of its ``task``'s environment.

    When the members' pass criteria differ, each scored rollout also gets the metric
    ``task_passed`` (1/0 under its own task's criterion, weight 0) and the group passes on it,
    so pass@k over a mixed run counts what each task calls solved.
    """

    def __init__(self, rubrics: dict[str, Rubric]) -> None:
        criteria = {r.pass_criterion for r in rubrics.values()}
        self.mixed_criteria = len(criteria) > 1
        # checks no member's functions yet
        super().__init__(parser=next(iter(rubrics.values())).parser)
        self.task_rubrics: dict[str, Rubric] = dict(rubrics)
        self.pass_criterion = (
            PassCriterion(PASSED_METRIC) if self.mixed_criteria else criteria.pop()
        )

    @property
    def func_names(self) -> list[str]:
        names = [n for r in self.task_rubrics.values() for n in r.func_names]
        return list(dict.fromkeys(names + ([PASSED_METRIC] if self.mixed_criteria else [])))

    @property
    def group_func_names(self) -> list[str]:
        return list(
            dict.fromkeys(n for r in self.task_rubrics.values() for n in r.group_func_names)
        )

    @property
    def requires_group_rollouts(self) -> bool:
        return any(r.requires_group_rollouts for r in self.task_rubrics.values())

    def check_reward_funcs(self, rows: RowFields | None = None) -> None:
        for task, rubric in self.task_rubrics.items():
            if rows is None:
                rubric.check_reward_funcs()
            elif (of_task := rows.for_task(task)) is not None:  # a task the run has rows of
                rubric.check_reward_funcs(of_task)

    def rubric_for(self, state: Mapping[str, Any]) -> Rubric:
        task = state.get("task")
        if task not in self.task_rubrics:
            raise ValueError(
                f"rollout task {task!r} is not one of the group's tasks {list(self.task_rubrics)}"
            )
        return self.task_rubrics[task]

    async def score_group(self, states: list[State]) -> None:
        """Score each task's states with its own rubric (a group normally holds one task)."""
        by_task: dict[Any, list[State]] = {}
        for s in states:
            by_task.setdefault(s.get("task"), []).append(s)
        await asyncio.gather(
            *(self.rubric_for(part[0]).score_group(part) for part in by_task.values())
        )
        if self.mixed_criteria:
            for s in states:
                if s.get("reward") is not None:
                    passed = self.rubric_for(s).pass_criterion.passes(s)
                    s["metrics"] = {
                        **(s.get("metrics") or {}),
                        PASSED_METRIC: 1.0 if passed else 0.0,
                    }

    async def cleanup(self, state: State) -> None:
        await self.rubric_for(state).cleanup(state)


class EnvGroup(Environment):
    """Several environments as one: ``vf.EnvGroup([env_a, env_b], names=["a", "b"])``.

    ``names`` (default: each member's ``env_id``) become the ``task`` of their rows. Example ids
    run over the concatenated dataset (member by member), so they are unique across the group.
    ``evaluate(num_examples=...)`` takes an int (that many examples *of each task*) or a dict
    ``{task: n}`` (only the tasks named; -1 for all of one), so one call runs a balanced mixture
    or a chosen subset. Results split with ``out.by_task()`` and plot with ``by="task"``.
    Options not given (``max_retries``, ``rollout_timeout``) are the most lenient of the members'.
    ``env_id`` names the group (default: the names joined by ``+``).

    Args:
        envs: the member environments, at least one.
        names: each member's task name (default: its ``env_id``).
    """

    def __init__(
        self, envs: Sequence[Environment], names: Sequence[str] | None = None, **kwargs: Any
    ) -> None:
        envs = list(envs)
        if not envs:
            raise ValueError("EnvGroup needs at least one environment")
        for e in envs:
            if not isinstance(e, Environment):
                raise TypeError(f"EnvGroup members must be Environments, got {type(e).__name__}")
        names = [str(e.env_id) for e in envs] if names is None else [str(n) for n in names]
        if len(names) != len(envs):
            raise ValueError(f"EnvGroup got {len(envs)} environments but {len(names)} names")
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"EnvGroup names must be unique; repeated: {dupes} (pass names=[...])")
        self.envs: dict[str, Environment] = dict(zip(names, envs, strict=True))
        kwargs.setdefault("max_retries", max(e.max_retries for e in envs))
        timeouts = [e.rollout_timeout for e in envs]
        kwargs.setdefault(
            "rollout_timeout", None if None in timeouts else max(t for t in timeouts if t)
        )
        kwargs.setdefault("max_concurrent", _widest_concurrency([e.max_concurrent for e in envs]))
        kwargs.setdefault("score_rollouts", all(e.score_rollouts for e in envs))
        kwargs.setdefault("env_id", "+".join(names))
        super().__init__(
            rubric=EnvGroupRubric({n: e.rubric for n, e in self.envs.items()}), **kwargs
        )
        self.env_args = {
            "envs": {n: {"env_id": e.env_id, "env_args": e.env_args} for n, e in self.envs.items()}
        }
        self._train: list[RolloutInput] | None = None
        self._eval: list[RolloutInput] | None = None

    @property
    def names(self) -> list[str]:
        return list(self.envs)

    @property
    def group_members(self) -> dict[str, Environment]:
        """The group's environments by task name."""
        return self.envs

    @property
    def prompt_template(self) -> dict[str, Any]:
        """Each member's system prompt and few-shot turns, by task."""
        return {"tasks": {name: env.prompt_template for name, env in self.group_members.items()}}

    def task_metadata(self, inputs: Iterable[RolloutInput] | None = None) -> dict[str, Any]:
        """Per task: the member's env_id, pass criterion and (given a run's ``inputs``) how many
        examples of it the run holds; saved in the run's metadata."""
        counts: dict[str, set[Any]] = {n: set() for n in self.envs}
        for inp in inputs or []:
            counts.setdefault(str(inp.get("task")), set()).add(inp.get("example_id"))
        return {
            n: {
                "env_id": e.env_id,
                "pass_criterion": e.pass_criterion.to_dict(),
                "num_examples": len(counts[n]),
            }
            for n, e in self.envs.items()
        }

    # -- data ---------------------------------------------------------------------------------

    def _concat(self, parts: list[tuple[str, list[RolloutInput]]]) -> list[RolloutInput]:
        rows: list[RolloutInput] = []
        for name, inputs in parts:
            for inp in inputs:
                rows.append({**inp, "task": name, "example_id": len(rows)})
        return rows

    def get_dataset(self) -> list[RolloutInput]:
        """The members' training datasets concatenated (members without one are left out)."""
        if self._train is None:
            self._train = self._concat(
                [(n, e.get_dataset()) for n, e in self.envs.items() if e._dataset]
            )
        return self._train

    def get_eval_dataset(self) -> list[RolloutInput]:
        """The members' eval datasets (each falling back to its training dataset), concatenated."""
        if self._eval is None:
            self._eval = self._concat([(n, e.get_eval_dataset()) for n, e in self.envs.items()])
        return self._eval

    def get_eval_inputs(
        self,
        num_examples: int | dict[str, int] = -1,
        rollouts_per_example: int = 1,
        shuffle: bool = False,
        seed: int = 0,
    ) -> list[RolloutInput]:
        """Pick examples per task (``num_examples``: an int for each task, or ``{task: n}``),
        interleave the tasks, and repeat each example ``rollouts_per_example`` times."""
        if rollouts_per_example < 1:
            raise ValueError(f"rollouts_per_example must be >= 1, got {rollouts_per_example}")
        if isinstance(num_examples, dict):
            unknown = sorted(set(num_examples) - set(self.envs))
            if unknown:
                raise ValueError(
                    f"num_examples names unknown tasks {unknown}; the group's tasks are {self.names}"
                )
            counts = {n: num_examples.get(n, 0) for n in self.envs}
        else:
            counts = dict.fromkeys(self.envs, num_examples)
        for name, n in counts.items():
            if isinstance(n, bool) or not isinstance(n, int) or n < -1:
                raise ValueError(
                    f"num_examples for task {name!r} must be an int >= -1 (-1: all), got {n!r}"
                )
        per_task: list[list[RolloutInput]] = []
        for name in self.envs:
            examples = [r for r in self.get_eval_dataset() if r["task"] == name]
            if shuffle:
                random.Random(f"{seed}:{name}").shuffle(examples)
            n = counts[name]
            per_task.append(examples if n is None or n < 0 else examples[:n])
        mixed = [
            ex
            for i in range(max(map(len, per_task), default=0))
            for part in per_task
            if i < len(part)
            for ex in [part[i]]
        ]
        return [ex for ex in mixed for _ in range(rollouts_per_example)]

    def prepare_input(self, row: DatasetRow, index: int) -> RolloutInput:
        """Check a caller's input row names one of the group's tasks, and complete it as that
        task's input (a prompt from ``question`` with the task's system prompt and few-shot turns)."""
        task = row.get("task")
        if task not in self.envs:
            raise ValueError(
                f"inputs row {index}: field 'task' must be one of the group's tasks {self.names}, "
                f"got {task!r}"
            )
        env = self.envs[task]
        return complete_input(dict(row), index, env.system_prompt, env.few_shot)

    # -- layer 1 -------------------------------------------------------------------------------

    def env_for(self, input: RolloutInput) -> Environment:
        """The member that runs rollouts of ``input["task"]``."""
        task = input.get("task")
        if task not in self.envs:
            raise ValueError(f"rollout task {task!r} is not one of the group's tasks {self.names}")
        return self.envs[task]

    async def rollout(
        self,
        input: RolloutInput,
        client: ModelClient,
        model: str,
        sampling_args: dict[str, Any] | None = None,
    ) -> State:
        return await self.env_for(input).rollout(input, client, model, sampling_args)

    def __repr__(self) -> str:
        return f"EnvGroup({', '.join(f'{n}={type(e).__name__}' for n, e in self.envs.items())})"


def _widest_concurrency(limits: list[int | str | None]) -> int | str | None:
    """The group's bound on requests in flight: none when a member has none, else ``"auto"``
    when a member adapts, else the largest number."""
    if None in limits:
        return None
    if "auto" in limits:
        return "auto"
    return max(x for x in limits if isinstance(x, int))
