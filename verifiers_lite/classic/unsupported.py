"""Classic environments verifiers_lite cannot run: they need Prime Intellect's remote sandboxes.

Constructing one raises :class:`~verifiers_lite.classic.errors.ClassicUnsupportedError` naming
it, before any request. (verifiers_lite's own :class:`~verifiers_lite.envs.python_env.PythonEnv`
runs code in a local bubblewrap sandbox.)
"""

from __future__ import annotations

from typing import Any

from verifiers_lite.classic.errors import ClassicUnsupportedError


class _NeedsPrimeSandbox:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise ClassicUnsupportedError(
            f"vf.{type(self).__name__} runs code in Prime Intellect's remote sandboxes (prime-sandboxes), "
            "which verifiers_lite does not support; verifiers_lite.PythonEnv runs Python in a local sandbox"
        )


class SandboxEnv(_NeedsPrimeSandbox):
    """Refused: needs Prime sandboxes."""


class PythonEnv(_NeedsPrimeSandbox):
    """Refused: needs Prime sandboxes."""
