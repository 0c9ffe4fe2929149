"""What the scheduler, the executors and the results layer need from an environment and its
rubric, and nothing more.

:class:`~verifiers_lite.envs.environment.Environment` satisfies :class:`RunnableEnvironment` and
:class:`~verifiers_lite.rubrics.rubric.Rubric` satisfies :class:`RunnableRubric`; the scheduler,
the executors, the run fingerprint, the manifest and re-scoring are typed against these
protocols, so they sit below the environments and never import them (the environments call the
scheduler). An environment group answers through the protocols too (``group_members``,
``task_rubrics``): nothing below asks what class it was given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from verifiers_lite.core.records import DatasetRow, RolloutInput, Row, State

if TYPE_CHECKING:
    from verifiers_lite.core.dataset import RowFields
    from verifiers_lite.core.model_client import ModelClientLike
    from verifiers_lite.core.pass_criterion import PassCriterion


class RunnableRubric(Protocol):
    """The part of a rubric a run checks before it starts, and what decides its scores (the
    reward code a resume must match, :mod:`verifiers_lite.results.fingerprint`)."""

    @property
    def func_names(self) -> list[str]:
        """The metric name of each reward function."""
        ...

    @property
    def funcs(self) -> Sequence[Callable[..., Any]]: ...

    @property
    def weights(self) -> Sequence[float]: ...

    @property
    def parser(self) -> object: ...

    @property
    def pass_criterion(self) -> PassCriterion:
        """When a rollout counts as solved for pass@k."""
        ...

    @property
    def task_rubrics(self) -> Mapping[str, RunnableRubric]:
        """An environment group's rubric of each task (empty for one environment's rubric)."""
        ...

    def fingerprint_extra(self) -> dict[str, Any] | None:
        """What else decides the scores (a judge's model and prompt), else None."""
        ...

    @property
    def group_func_names(self) -> list[str]:
        """Names of the reward functions that score a whole group at once."""
        ...

    @property
    def requires_group_rollouts(self) -> bool:
        """True when some reward function needs whole groups."""
        ...

    def check_reward_funcs(self, rows: RowFields | None = None) -> None:
        """Raise when a reward function cannot be called as written, or (given the run's
        ``rows``) takes a field no row supplies; before any request."""
        ...


class ScoringRubric(RunnableRubric, Protocol):
    """A rubric as re-scoring uses it: it scores a group of states, then cleans each up."""

    async def score_group(self, states: list[State]) -> None: ...

    async def cleanup(self, state: State) -> None: ...


class RunnableEnvironment(Protocol):
    """An environment as the scheduler runs it: its identity and defaults, how a caller's input
    row becomes a rollout input, and the two ways to run rollouts (a group, or one alone)."""

    @property
    def env_id(self) -> str | None: ...

    @property
    def loaded_as(self) -> str | None:
        """The id ``load_environment`` built it under (None: built by hand)."""
        ...

    @property
    def source_module(self) -> str | None:
        """The module that built it (its loader's), whose code the run manifest hashes."""
        ...

    @property
    def group_members(self) -> Mapping[str, RunnableEnvironment]:
        """An environment group's environments by task (empty for one environment)."""
        ...

    @property
    def env_args(self) -> dict[str, Any]: ...

    @property
    def prompt_template(self) -> dict[str, Any]:
        """What every question is asked with: ``{"system_prompt", "few_shot"}`` (an environment
        group's: ``{"tasks": {task: its member's}}``), saved in the run's metadata."""
        ...

    @property
    def sampling_args(self) -> dict[str, Any]:
        """Sampling arguments every request gets (a run's own override them)."""
        ...

    @property
    def max_concurrent(self) -> int | Literal["auto"] | None:
        """Model requests in flight when the run does not say (``"auto"``: adaptive)."""
        ...

    @property
    def score_rollouts(self) -> bool:
        """Whether rollouts are scored when the run does not say."""
        ...

    @property
    def rubric(self) -> RunnableRubric: ...

    @property
    def requires_group_rollouts(self) -> bool: ...

    @property
    def pass_criterion(self) -> PassCriterion: ...

    def prepare_input(self, row: DatasetRow, index: int) -> RolloutInput:
        """Validate a caller's row ``index`` and return it as a rollout input (a ValueError
        naming the row and field when it is not one); the caller's row is never changed."""
        ...

    def task_metadata(self, inputs: Iterable[RolloutInput]) -> dict[str, Any] | None:
        """Per-task facts saved in the run's metadata (an environment group's), else None."""
        ...

    async def run_rollout(
        self,
        input: RolloutInput,
        client: ModelClientLike,
        model: str,
        sampling_args: dict[str, Any] | None = None,
        *,
        score: bool = True,
        rollout_index: int = 0,
    ) -> Row:
        """One rollout, scored alone, as an output row (a failure is a row with ``error``)."""
        ...

    async def run_group(
        self,
        inputs: list[RolloutInput],
        client: ModelClientLike,
        model: str,
        sampling_args: dict[str, Any] | None = None,
        *,
        score: bool = True,
    ) -> list[Row]:
        """The rollouts of one example, scored together, as output rows."""
        ...

    async def finish_group(
        self,
        states: list[State],
        *,
        score: bool = True,
        started: float | None = None,
    ) -> list[Row]:
        """Score states whose rollouts ran elsewhere as one group, clean up, return their rows."""
        ...
