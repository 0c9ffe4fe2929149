"""Where rollouts run: in this process (LocalExecutor), on Ray actors (RayExecutor) or on
rollout servers (RemoteExecutor)."""

from verifiers_lite.executors.base import Executor, RunContext, WorkUnit
from verifiers_lite.executors.local import LocalExecutor

__all__ = ["Executor", "LocalExecutor", "RayExecutor", "RemoteExecutor", "RunContext", "WorkUnit"]


def __getattr__(name: str):  # optional extras (ray; the server client) import lazily
    if name == "RayExecutor":
        from verifiers_lite.executors.ray import RayExecutor

        return RayExecutor
    if name == "RemoteExecutor":
        from verifiers_lite.executors.remote import RemoteExecutor

        return RemoteExecutor
    raise AttributeError(name)
