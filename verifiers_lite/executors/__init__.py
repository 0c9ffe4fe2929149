"""Where rollouts run: in this process (LocalExecutor), on Ray actors (RayExecutor) or on
rollout servers (RemoteExecutor). The optional extras (ray; the server client) import on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

# The public names are the imports of the TYPE_CHECKING block below, each imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.executors.base import Executor, RunContext, WorkUnit
    from verifiers_lite.executors.local import LocalExecutor
    from verifiers_lite.executors.ray import RayExecutor
    from verifiers_lite.executors.remote import RemoteExecutor
