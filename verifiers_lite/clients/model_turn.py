"""Which model turn of which rollout a model call is: set by the environment around each call.

A conversation's assistant messages are not its model turns: few-shot examples and any
assistant message in the prompt were written before the rollout began. A client that needs
the rollout's own turn (``ScriptedClient`` follows its script by it) reads
:func:`current_model_turn`; outside a rollout (a judge's request, a direct ``chat`` call) there
is none.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass


@dataclass(frozen=True)
class ModelTurn:
    """One model call of a rollout."""

    index: int  #: 0-based: the model calls this rollout made before this one
    max_turns: int | None  #: the rollout's turn budget (None: the environment sets none)


_CURRENT: contextvars.ContextVar[ModelTurn | None] = contextvars.ContextVar(
    "verifiers_lite_model_turn", default=None
)


def current_model_turn() -> ModelTurn | None:
    """The rollout's model turn being requested now, or None outside a rollout's model call."""
    return _CURRENT.get()


class model_turn:  # noqa: N801  (a context manager used like a function: ``with model_turn(...)``)
    """Mark the calls made inside the block as model turn ``index`` of the running rollout
    (each rollout runs in its own task, so turns of concurrent rollouts never mix). A class, not
    a generator: it is entered on every model call."""

    __slots__ = ("_turn", "_token")

    def __init__(self, index: int, max_turns: int | None) -> None:
        self._turn = ModelTurn(index, max_turns)

    def __enter__(self) -> None:
        self._token = _CURRENT.set(self._turn)

    def __exit__(self, *exc: object) -> None:
        _CURRENT.reset(self._token)
