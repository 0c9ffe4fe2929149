"""The rollout server (FastAPI + uvicorn): app, service, backends, lifecycle, deployment.

Its client side is :mod:`verifiers_lite.remote`; the wire types both speak live in
:mod:`verifiers_lite.server.protocol` (offered here too).

Names are imported on first use, so ``import verifiers_lite.server`` needs neither fastapi nor
uvicorn; the server pieces fail with an ImportError naming the ``server`` extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

# The public names are the imports of the TYPE_CHECKING block below, each imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.server.app import create_rollout_server
    from verifiers_lite.server.backend import RolloutBackend, RolloutContext
    from verifiers_lite.server.backends.local import LocalBackend
    from verifiers_lite.server.errors import RolloutFailure
    from verifiers_lite.server.lifecycle import ShutdownTimeouts
    from verifiers_lite.server.protocol import (
        RolloutAccepted,
        RolloutRequest,
        RolloutResultResponse,
        RolloutSample,
        RolloutStatus,
        WireErrorCategory,
    )
    from verifiers_lite.server.ray_deploy import RolloutServers, deploy_rollout_servers
    from verifiers_lite.server.runner import run_rollout_server
