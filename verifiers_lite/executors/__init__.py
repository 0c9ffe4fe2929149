"""Where rollouts run: in this process (LocalExecutor) or spread over Ray actors (RayExecutor)."""

from verifiers_lite.executors.base import Executor, RunContext, WorkUnit
from verifiers_lite.executors.local import LocalExecutor

__all__ = ["Executor", "LocalExecutor", "RayExecutor", "RunContext", "WorkUnit"]


def __getattr__(name: str):  # RayExecutor imports lazily: ray is an optional extra
    if name == "RayExecutor":
        from verifiers_lite.executors.ray import RayExecutor

        return RayExecutor
    raise AttributeError(name)
