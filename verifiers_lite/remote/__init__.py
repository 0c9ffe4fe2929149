"""The client side of the rollout server: ``RolloutClient``, a pool of them, rollout handles.

Names are imported on first use, so ``import verifiers_lite.remote`` costs nothing until used; a
missing HTTP dependency fails with an ImportError naming the ``server`` extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

# The public names are the imports of the TYPE_CHECKING block below, each imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.remote.client import RolloutClient
    from verifiers_lite.remote.errors import RolloutAdmissionTimeoutError, RolloutProtocolError
    from verifiers_lite.remote.handle import RolloutHandle
    from verifiers_lite.remote.pool import RolloutClientPool
