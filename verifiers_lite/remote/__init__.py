"""The client side of the rollout server: ``RolloutClient``, a pool of them, rollout handles.

Names are imported lazily so ``import verifiers_lite.remote`` costs nothing until used; a missing
HTTP dependency fails with an ImportError naming the ``server`` extra.
"""

from __future__ import annotations

from verifiers_lite._util.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "RolloutClient": ".client",
    "RolloutClientPool": ".pool",
    "RolloutHandle": ".handle",
    "RolloutAdmissionTimeoutError": ".errors",
    "RolloutProtocolError": ".errors",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
