"""The rollout server (FastAPI + uvicorn): app, service, backends, lifecycle, deployment.

Its client side is :mod:`verifiers_lite.remote`; the wire types both speak live in
:mod:`verifiers_lite.server.protocol` (offered here too).

Names are imported lazily so ``import verifiers_lite.server`` needs neither fastapi nor uvicorn;
the server pieces fail with an ImportError naming the ``server`` extra.
"""

from __future__ import annotations

from verifiers_lite._util.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "create_rollout_server": ".app",
    "run_rollout_server": ".runner",
    "RolloutBackend": ".backend",
    "RolloutContext": ".backend",
    "LocalBackend": ".backends.local",
    "deploy_rollout_servers": ".ray_deploy",
    "RolloutServers": ".ray_deploy",
    "RolloutStatus": "verifiers_lite.server.protocol",
    "RolloutRequest": "verifiers_lite.server.protocol",
    "RolloutAccepted": "verifiers_lite.server.protocol",
    "RolloutResultResponse": "verifiers_lite.server.protocol",
    "RolloutSample": "verifiers_lite.server.protocol",
    "WireErrorCategory": "verifiers_lite.server.protocol",
    "ShutdownTimeouts": ".lifecycle",
    "RolloutFailure": ".errors",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
