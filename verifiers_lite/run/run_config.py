"""RunConfig: the options of one run (``generate``/``evaluate``), checked when it is made."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from verifiers_lite.core.limits import Limits
from verifiers_lite.core.pricing import PriceTable, check_prices
from verifiers_lite.core.seeding import check_run_seed
from verifiers_lite.run.until import Precision

if TYPE_CHECKING:
    from verifiers_lite.executors.base import Executor


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """How a run goes. Every field has a default; a bad value is a ValueError (a value of the
    wrong kind a TypeError) naming the field, raised here, before any request."""

    sampling_args: dict[str, Any] | None = None
    """Sampling arguments for every request, over the environment's (``temperature``, ...)."""
    max_concurrent: int | None = None
    """Model requests in flight across the run (default: the environment's)."""
    independent_scoring: bool = False
    """Score each rollout alone (no group rewards); units are single rollouts."""
    results_path: str | os.PathLike[str] | None = None
    """A directory each finished group is appended to crash-safely; a rerun resumes it."""
    rollouts_per_example: int | None = None
    """Recorded in the metadata (default: the largest group of the inputs)."""
    callbacks: Any = None
    """A progress callback object, or a list of them (``on_start/on_progress/on_log/on_end``)."""
    on_start: Callable[..., Any] | None = None
    """Called once with the run's counts when it starts."""
    on_progress: Callable[..., Any] | None = None
    """Called with the counts and the rows of each finished unit."""
    on_log: Callable[..., Any] | None = None
    """Called with each line the run reports (a failing endpoint, a crashed model server)."""
    progress: Any = True
    """True: the default live display (a bar, or a notebook widget); False/None: none; or a
    display object."""
    fsync: bool = True
    """Flush saved groups to disk before going on (crash-safe); False is faster on slow disks."""
    executor: Executor | None = None
    """Where units run (default: this process; ``RayExecutor``/``RemoteExecutor`` elsewhere)."""
    score_rollouts: bool | None = None
    """False leaves every row unscored (default: the environment's)."""
    rerun_errors: bool = True
    """On resume, rerun errored rollouts (their whole group in grouped mode)."""
    allow_client_change: bool = False
    """Resume a saved run with another model client or endpoint than the one that made it
    (refused otherwise, before any request); each row records the session that produced it."""
    cache: Any = None
    """True or a file path: answer model calls from the response cache when it has them."""
    seed: int | None = 0
    """Each rollout's sampling seed is derived from it, the example and the rollout index;
    None sends no seed."""
    prices: PriceTable | None = None
    """Model name -> :class:`~verifiers_lite.core.pricing.ModelPrice` (USD per million tokens):
    each row's ``cost_usd`` is priced from it, else from what the endpoint declares (the embedded
    model: free), else from the bundled table; a model none names is "unpriced" (None)."""
    until: Precision | None = None
    """Stop starting new examples once the mean reward's anytime-valid interval is as narrow
    as asked (:class:`~verifiers_lite.run.until.Precision`); examples run in their order
    (``evaluate`` shuffles them with its seed)."""
    limits: Limits | None = None
    """Per-rollout :class:`~verifiers_lite.core.limits.Limits` (tokens, turns, time, cost, tool
    calls), over the environment's field by field."""

    def __post_init__(self) -> None:
        _positive_or_none("max_concurrent", self.max_concurrent)
        _positive_or_none("rollouts_per_example", self.rollouts_per_example)
        if self.sampling_args is not None and not isinstance(self.sampling_args, Mapping):
            raise TypeError(
                f"RunConfig.sampling_args must be a dict, got {type(self.sampling_args).__name__}"
            )
        if self.results_path is not None and not isinstance(self.results_path, (str, os.PathLike)):
            raise TypeError(
                f"RunConfig.results_path must be a path, got {type(self.results_path).__name__}"
            )
        for name in ("on_start", "on_progress", "on_log"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise TypeError(f"RunConfig.{name} must be callable, got {type(value).__name__}")
        if not isinstance(self.allow_client_change, bool):
            raise TypeError(
                f"RunConfig.allow_client_change must be True or False, got {self.allow_client_change!r}"
            )
        if self.seed is not None:
            try:
                check_run_seed(self.seed)
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"RunConfig.seed: {exc}") from exc

        if self.until is not None and not isinstance(self.until, Precision):
            raise TypeError(
                f"RunConfig.until must be a vf.Precision, got {type(self.until).__name__}"
            )
        if self.limits is not None and not isinstance(self.limits, Limits):
            raise TypeError(
                f"RunConfig.limits must be a vf.Limits, got {type(self.limits).__name__}"
            )
        try:
            check_prices(self.prices)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"RunConfig.{exc}") from exc

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with ``changes`` (validated again)."""
        return dataclasses.replace(self, **changes)


class EvaluationOptions(TypedDict, total=False):
    """The fields of :class:`RunConfig` as keyword arguments of ``evaluate`` (which takes
    ``rollouts_per_example`` and ``seed`` as its own parameters)."""

    sampling_args: dict[str, Any] | None
    max_concurrent: int | None
    independent_scoring: bool
    results_path: str | os.PathLike[str] | None
    callbacks: Any
    on_start: Callable[..., Any] | None
    on_progress: Callable[..., Any] | None
    on_log: Callable[..., Any] | None
    progress: Any
    fsync: bool
    executor: Executor | None
    score_rollouts: bool | None
    rerun_errors: bool
    allow_client_change: bool
    cache: Any
    prices: PriceTable | None
    until: Precision | None
    limits: Limits | None


class RunOptions(EvaluationOptions, total=False):
    """The fields of :class:`RunConfig` as keyword arguments (what ``generate`` takes)."""

    rollouts_per_example: int | None
    seed: int | None


def _positive_or_none(name: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"RunConfig.{name} must be an int or None, got {value!r}")
    if value < 1:
        raise ValueError(f"RunConfig.{name} must be >= 1, got {value}")


def run_config(method: str, config: RunConfig | None, options: Mapping[str, Any]) -> RunConfig:
    """The RunConfig of a call to ``method`` (``config`` with ``options`` over it). An unknown
    option is a TypeError naming ``method``, the function the user called."""
    known = [f.name for f in dataclasses.fields(RunConfig)]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise TypeError(
            f"{method}() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
            f"its options are {', '.join(known)}"
        )
    if config is not None and not isinstance(config, RunConfig):
        raise TypeError(f"{method}(): config must be a RunConfig, got {type(config).__name__}")
    return (config or RunConfig()).replace(**options) if options or config is None else config
