"""Classic ``vf.load_environment``: verifiers_lite's registry, which runs classic modules within
the classic scope (see :mod:`verifiers_lite.classic.scope`)."""

from __future__ import annotations

from typing import Any

from verifiers_lite.core.registry import load_environment as _registry_load


def load_environment(env_id: str, **env_args: Any) -> Any:
    """Build environment ``env_id`` (an installed or importable module) with ``env_args``."""
    return _registry_load(env_id, **env_args)
