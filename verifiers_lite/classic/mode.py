"""The two classic modes: ``"0.3.1"`` (the default) and ``"lenient"``.

``"0.3.1"`` runs what verifiers 0.3.1 runs, as it runs it, and refuses what it refuses with
its message, plus a note saying what verifiers_lite could run instead. ``"lenient"`` also runs
what older and newer classic code expects and 0.3.1 refuses — string ``task`` columns,
``state["turn"]``, ``is_completed(messages, state)`` (sync or async), ``env_response``
returning ``(messages, state)``, list datasets — and warns once per environment with the list
of each deviation it used (:class:`ClassicDeviationWarning`).

The mode is read from the environment variable ``VF_CLASSIC_MODE`` (so Ray workers, rollout
servers and ``vf-lite eval`` subprocesses share it) and set with :func:`set_classic_mode`.
"""

from __future__ import annotations

import os
import warnings
from typing import Literal, cast

from verifiers_lite._util.errors import VerifiersError

ClassicMode = Literal["0.3.1", "lenient"]
MODES: tuple[ClassicMode, ...] = ("0.3.1", "lenient")
MODE_VARIABLE = "VF_CLASSIC_MODE"


class ClassicDeviationWarning(VerifiersError, UserWarning):
    """Lenient mode ran something verifiers 0.3.1 refuses (the message lists each deviation); a
    ``UserWarning`` in the library's one exception tree."""


def classic_mode() -> ClassicMode:
    """The mode now in force (``VF_CLASSIC_MODE``, default ``"0.3.1"``)."""
    value = os.environ.get(MODE_VARIABLE, "").strip() or "0.3.1"
    if value not in MODES:
        raise ValueError(
            f"{MODE_VARIABLE}={value!r} is not a classic mode; use one of {list(MODES)}"
        )
    return cast(ClassicMode, value)


def set_classic_mode(mode: ClassicMode) -> None:
    """Run classic environments built from now on in ``mode`` (this process and the
    processes it starts)."""
    if mode not in MODES:
        raise ValueError(f"{mode!r} is not a classic mode; use one of {list(MODES)}")
    os.environ[MODE_VARIABLE] = mode


def lenient() -> bool:
    return classic_mode() == "lenient"


def refusal(exc: BaseException, instead: str) -> BaseException:
    """``exc`` (verifiers 0.3.1's own error, message unchanged) with a note on what
    verifiers_lite could run instead."""
    exc.add_note(
        f"verifiers_lite refuses this as verifiers 0.3.1 does (classic mode '0.3.1'). {instead}"
    )
    return exc


LENIENT_HINT = f"Set {MODE_VARIABLE}=lenient (or verifiers_lite.classic.set_classic_mode('lenient')) to run it anyway"


class Deviations:
    """The deviations from 0.3.1 one environment used in lenient mode, warned about once."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.seen: list[str] = []
        self._warned: set[str] = set()

    def note(self, deviation: str) -> None:
        """Record ``deviation`` and warn (once per deviation) listing every one seen so far."""
        if deviation not in self.seen:
            self.seen.append(deviation)
        if deviation in self._warned:
            return
        self._warned.add(deviation)
        listed = "; ".join(self.seen)
        warnings.warn(
            f"{self.owner} runs in lenient classic mode with what verifiers 0.3.1 refuses: {listed}",
            ClassicDeviationWarning,
            stacklevel=3,
        )
