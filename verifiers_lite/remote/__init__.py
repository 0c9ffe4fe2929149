"""The client side of the rollout server: ``RolloutClient``, a pool of them, rollout handles.

Names are imported lazily so ``import verifiers_lite.remote`` costs nothing until used; a missing
HTTP dependency fails with an ImportError naming the ``server`` extra.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "RolloutClient": "client",
    "RolloutClientPool": "pool",
    "RolloutHandle": "handle",
    "RolloutAdmissionTimeoutError": "errors",
    "RolloutProtocolError": "errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'verifiers_lite.remote' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
