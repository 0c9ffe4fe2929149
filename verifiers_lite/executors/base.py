"""Executors run scheduling units (whole groups or single rollouts); the scheduler owns the rest."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from verifiers_lite.core.records import RolloutInput, Row

if TYPE_CHECKING:
    from verifiers_lite.core.model_client import ModelClientLike
    from verifiers_lite.core.runnable import RunnableEnvironment


@dataclass(slots=True)
class WorkUnit:
    """One scheduling unit: a whole group (grouped mode) or one rollout (independent mode)."""

    example_id: Any
    inputs: list[RolloutInput]
    indices: list[int]
    #: the example's fingerprint for resume (its first input's hash), stamped on the unit's rows;
    #: taken when the group's inputs are read so that they are not prepared again to compute it
    input_hash: str | None = None


@dataclass(slots=True)
class RunContext:
    """What an executor needs to know about the run it serves."""

    env: RunnableEnvironment
    client: ModelClientLike
    model: str
    sampling_args: dict[str, Any] | None
    max_concurrent: int | Literal["auto"] | None  # "auto": an adaptive limit per endpoint
    independent: bool
    on_log: Callable[[str], None]
    score: bool = True  # False: rollouts come back unscored (no reward function runs)


class Executor(Protocol):
    """Runs units for the scheduler. ``slots`` is how many units it wants in flight at once.

    ``in_process`` is the executor's one declared capability: True when its rollouts call the
    run's model client in this process, so objects of this process (the response cache) can
    wrap that client; an executor that ships rollouts elsewhere declares False.
    """

    in_process: bool

    async def start(self, ctx: RunContext, group_size: int) -> int: ...
    async def run(self, unit: WorkUnit) -> list[Row]: ...
    def summary(self) -> dict[str, Any]: ...
    async def close(self) -> None: ...


def fixed_limit(ctx: RunContext, who: str) -> int | None:
    """The run's bound on requests in flight, for an executor that takes a number only
    (``who``): ``max_concurrent="auto"`` adapts the requests this process sends, so it is
    refused by an executor whose requests are sent elsewhere."""
    if isinstance(ctx.max_concurrent, str):
        raise ValueError(
            f"max_concurrent={ctx.max_concurrent!r} adapts the requests this process sends to "
            f"each endpoint (the in-process executor); {who} takes a number or None"
        )
    return ctx.max_concurrent


def endpoint_specs(client: ModelClientLike, who: str) -> list[tuple[str, str | None]]:
    """(base_url, api_key) of each model endpoint: what another process needs to reach them.
    ``who`` (the executor) is named when a client has no base_url."""
    items = client if isinstance(client, (list, tuple)) else [client]
    specs: list[tuple[str, str | None]] = []
    for c in items:
        if isinstance(c, str):
            specs.append((c.rstrip("/"), None))
            continue
        base_url = str(getattr(c, "base_url", "") or "")
        if not base_url:
            raise TypeError(
                f"{who} needs clients with a base_url to reach them from another process; got {c!r}"
            )
        specs.append((base_url.rstrip("/"), getattr(c, "api_key", None)))
    if not specs:
        raise ValueError(f"{who} needs at least one model client (endpoint); got none")
    return specs
