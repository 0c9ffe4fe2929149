"""Run a rollout engine as a Ray actor (``ray`` is an optional extra, imported lazily).

``MultiTurnRollout.remote(sampler=..., template=...)`` or ``remote_rollout(factory)`` returns an
actor handle; ``ray.get(actor.__call__.remote(trajectories))`` (or ``actor.run.remote``) gives
the same results as calling the engine in-process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from verifiers_lite._util.extras import require

__all__ = ["RolloutActor", "remote_rollout"]


def _ray() -> Any:
    return require("ray", "running rollouts as Ray actors", "ray")


class RolloutActor:
    """Holds one rollout engine inside a Ray worker process.

    ``build`` is a class (called with ``args``/``kwargs``) or a zero-argument factory. A factory
    is the way to go for models that should be loaded in the actor rather than pickled into it.
    """

    def __init__(self, build: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self.engine = build(*args, **kwargs)

    def __call__(self, trajectories: list[Any], **kwargs: Any) -> list[dict[str, Any]]:
        return self.engine(trajectories, **kwargs)

    def run(self, trajectories: list[Any], **kwargs: Any) -> list[dict[str, Any]]:
        """Same as calling the actor (for code that prefers a named method)."""
        return self.engine(trajectories, **kwargs)


def remote_rollout(
    build: Callable[..., Any], *args: Any, ray_options: dict[str, Any] | None = None, **kwargs: Any
) -> Any:
    """Start ``build(*args, **kwargs)`` as a Ray actor; needs ``ray.init()`` (or a cluster).

    ``ray_options`` go to ``ray.remote`` (default ``num_cpus=1``).
    """
    ray = _ray()
    options = {"num_cpus": 1, **(ray_options or {})}
    return ray.remote(**options)(RolloutActor).remote(build, *args, **kwargs)
