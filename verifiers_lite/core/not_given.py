"""A "not given" marker for options whose ``None`` means something of its own.

``RunConfig(max_concurrent=None)`` asks for no bound, while leaving ``max_concurrent`` out takes
the environment's; ``evaluate(seed=None)`` sends no seed, while leaving ``seed`` out takes the
config's. Such an option defaults to :data:`NOT_GIVEN`, so the two can be told apart."""

from __future__ import annotations

import enum
from typing import Final, TypeVar

T = TypeVar("T")


class NotGiven(enum.Enum):
    """The type of :data:`NOT_GIVEN` (one member, so type checkers narrow ``x is NOT_GIVEN``)."""

    NOT_GIVEN = "NOT_GIVEN"

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN: Final = NotGiven.NOT_GIVEN
"""An option left out (distinct from ``None``, which an option may give a meaning)."""


def given(value: T | NotGiven, default: T) -> T:
    """``value``, or ``default`` when it was not given."""
    return default if value is NOT_GIVEN else value
