"""RunConfig: the options of one run (``generate``/``evaluate``), checked when it is made."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from verifiers_lite.clients.adaptive import check_max_concurrent
from verifiers_lite.core.limits import Limits
from verifiers_lite.core.not_given import NOT_GIVEN, NotGiven
from verifiers_lite.core.pricing import PriceTable, check_prices
from verifiers_lite.core.seeding import check_run_seed
from verifiers_lite.run.budget import check_budget
from verifiers_lite.run.until import Precision

if TYPE_CHECKING:
    from verifiers_lite.executors.base import Executor


def _positive(name: str, value: Any) -> None:
    """None, or an int >= 1."""
    if value is None or value is NOT_GIVEN:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"RunConfig.{name} must be an int or None, got {value!r}")
    if value < 1:
        raise ValueError(f"RunConfig.{name} must be >= 1, got {value}")


def _concurrency(name: str, value: Any) -> None:
    if value is not NOT_GIVEN:
        check_max_concurrent(value, f"RunConfig.{name}")


def _budget(name: str, value: Any) -> None:
    check_budget(name, value)


def _kind(kinds: tuple[type, ...], what: str) -> Callable[[str, Any], None]:
    """None, or a value of one of ``kinds`` (described as ``what``)."""

    def check(name: str, value: Any) -> None:
        if value is not None and not isinstance(value, kinds):
            raise TypeError(f"RunConfig.{name} must be {what}, got {type(value).__name__}")

    return check


def _callable(name: str, value: Any) -> None:
    if value is not None and not callable(value):
        raise TypeError(f"RunConfig.{name} must be callable, got {type(value).__name__}")


def _flag(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"RunConfig.{name} must be True or False, got {value!r}")


def _seed(name: str, value: Any) -> None:
    if value is None:
        return
    try:
        check_run_seed(value)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"RunConfig.{name}: {exc}") from exc


def _prices(name: str, value: Any) -> None:
    try:
        check_prices(value)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"RunConfig.{exc}") from exc


def _option(default: Any, check: Callable[[str, Any], None] | None = None) -> Any:
    """A field with its default and the check its values pass (run when a config is made)."""
    return field(default=default, metadata={"check": check} if check else {})


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """How a run goes. Every field has a default; a bad value is a ValueError (a value of the
    wrong kind a TypeError) naming the field, raised here, before any request: each field
    declares the check its values pass. An option whose ``None`` means something of its own
    (``max_concurrent=None``: no bound) defaults to ``NOT_GIVEN`` (the environment's)."""

    sampling_args: dict[str, Any] | None = _option(None, _kind((Mapping,), "a dict"))
    """Sampling arguments for every request, over the environment's (``temperature``, ...)."""
    max_concurrent: int | Literal["auto"] | None | NotGiven = _option(NOT_GIVEN, _concurrency)
    """Model requests in flight across the run; None: no bound; ``"auto"``: each endpoint's own
    limit, raised while its throughput rises and lowered on 429s, timeouts and growing latency
    (:mod:`~verifiers_lite.clients.adaptive`); left out: the environment's."""
    independent_scoring: bool = _option(False, _flag)
    """Score each rollout alone (no group rewards); units are single rollouts."""
    results_path: str | os.PathLike[str] | None = _option(None, _kind((str, os.PathLike), "a path"))
    """A directory each finished group is appended to crash-safely; a rerun resumes it."""
    rollouts_per_example: int | None = _option(None, _positive)
    """Recorded in the metadata (default: the largest group of the inputs)."""
    callbacks: Any = None
    """A progress callback object, or a list of them (``on_start/on_progress/on_log/on_end``)."""
    on_start: Callable[..., Any] | None = _option(None, _callable)
    """Called once with the run's counts when it starts."""
    on_progress: Callable[..., Any] | None = _option(None, _callable)
    """Called with the counts and the rows of each finished unit."""
    on_log: Callable[..., Any] | None = _option(None, _callable)
    """Called with each line the run reports (a failing endpoint, a crashed model server)."""
    progress: Any = True
    """True: the default live display (a bar, or a notebook widget); False/None: none; or a
    display object."""
    fsync: bool = _option(True, _flag)
    """Flush saved groups to disk before going on (crash-safe); False is faster on slow disks."""
    executor: Executor | None = None
    """Where units run (default: this process; ``RayExecutor``/``RemoteExecutor`` elsewhere)."""
    score_rollouts: bool | None = None
    """False leaves every row unscored (default: the environment's)."""
    rerun_errors: bool = _option(True, _flag)
    """On resume, rerun errored rollouts (their whole group in grouped mode)."""
    allow_client_change: bool = _option(False, _flag)
    """Resume a saved run with another model client or endpoint than the one that made it
    (refused otherwise, before any request); each row records the session that produced it."""
    cache: Any = None
    """True or a file path: answer model calls from the response cache when it has them."""
    seed: int | None = _option(0, _seed)
    """Each rollout's sampling seed is derived from it, the example and the rollout index;
    None sends no seed."""
    prices: PriceTable | None = _option(None, _prices)
    """Model name -> :class:`~verifiers_lite.core.pricing.ModelPrice` (USD per million tokens):
    each row's ``cost_usd`` is priced from it, else from what the endpoint declares (the embedded
    model: free), else from the bundled table; a model none names is "unpriced" (None)."""
    until: Precision | None = _option(None, _kind((Precision,), "a vf.Precision"))
    """Stop starting new examples once the mean reward's anytime-valid interval is as narrow
    as asked (:class:`~verifiers_lite.run.until.Precision`); examples run in their order
    (``evaluate`` shuffles them with its seed)."""
    limits: Limits | None = _option(None, _kind((Limits,), "a vf.Limits"))
    """Per-rollout :class:`~verifiers_lite.core.limits.Limits` (tokens, turns, time, cost, tool
    calls), over the environment's field by field."""
    max_cost_usd: float | None = _option(None, _budget)
    """The run's budget in US dollars (its rows' ``cost_usd``, earlier sessions' included): no
    new unit starts once it would take the run past it (:mod:`~verifiers_lite.run.budget`);
    needs a price for the model."""
    max_tokens_total: int | None = _option(None, _budget)
    """The run's budget in tokens (prompt and completion, earlier sessions' included)."""
    max_wall_s: float | None = _option(None, _budget)
    """The run's budget in seconds of wall time (its sessions' together)."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            check = f.metadata.get("check")
            if check is not None:
                check(f.name, getattr(self, f.name))

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with ``changes`` (validated again)."""
        return dataclasses.replace(self, **changes)


class EvaluationOptions(TypedDict, total=False):
    """The fields of :class:`RunConfig` as keyword arguments of ``evaluate`` (which takes
    ``rollouts_per_example`` and ``seed`` as its own parameters)."""

    sampling_args: dict[str, Any] | None
    max_concurrent: int | Literal["auto"] | None  # left out: the environment's
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
    max_cost_usd: float | None
    max_tokens_total: int | None
    max_wall_s: float | None


class RunOptions(EvaluationOptions, total=False):
    """The fields of :class:`RunConfig` as keyword arguments (what ``generate`` takes)."""

    rollouts_per_example: int | None
    seed: int | None


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
