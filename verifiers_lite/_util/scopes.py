"""Resource scopes: what a run or a rollout started (tool server processes), stopped when it ends.

``generate`` holds a run scope around a run and every rollout attempt holds a rollout scope;
code running inside registers a closer with the innermost scope of the kind it needs
(:func:`current_run_scope`, :func:`current_rollout_scope`). A scope runs its closers, newest
first, when it ends however it ends: a normal end, an exception, a cancellation (Ctrl-C, a
kernel interrupt). The scope is set through a context variable, so tasks created inside it
(concurrent rollouts, tool calls) see it.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable
from types import TracebackType

__all__ = [
    "ResourceScope",
    "current_rollout_scope",
    "current_run_scope",
    "rollout_scope",
    "run_scope",
]

log = logging.getLogger(__name__)

Closer = Callable[[], Awaitable[None]]

_RUN: contextvars.ContextVar[ResourceScope | None] = contextvars.ContextVar(
    "verifiers_lite_run_scope", default=None
)
_ROLLOUT: contextvars.ContextVar[ResourceScope | None] = contextvars.ContextVar(
    "verifiers_lite_rollout_scope", default=None
)


class ResourceScope:
    """Closers run once, newest first, by :meth:`aclose`; usable as ``async with`` (which also
    makes it the current scope of its kind for the code inside)."""

    __slots__ = ("_closers", "_token", "_var", "closed")

    def __init__(self, var: contextvars.ContextVar[ResourceScope | None] | None = None) -> None:
        self._closers: list[Closer] = []
        self._var = var
        self._token: contextvars.Token[ResourceScope | None] | None = None
        self.closed = False

    def add(self, closer: Closer) -> None:
        """Run ``closer`` when the scope ends (at once is not possible: the scope is open)."""
        if self.closed:
            raise RuntimeError("this scope has already ended")
        self._closers.append(closer)

    async def aclose(self) -> None:
        """Run every closer, newest first. A closer that fails is logged and the others still
        run; a cancellation arriving meanwhile is re-raised once all have run."""
        self.closed = True
        cancelled = False
        while self._closers:
            closer = self._closers.pop()
            try:
                await closer()
            except asyncio.CancelledError:
                cancelled = True
            except Exception:  # one resource that will not close must not keep the others open
                log.exception("closing a resource failed")
        if cancelled:
            raise asyncio.CancelledError()

    async def __aenter__(self) -> ResourceScope:
        if self._var is not None:
            self._token = self._var.set(self)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._var is not None and self._token is not None:
            self._var.reset(self._token)
        await self.aclose()

    def enter(self) -> contextvars.Token[ResourceScope | None]:
        """Make this the current scope of its kind for code started from here (tasks created
        until :meth:`leave`), without entering it: its owner closes it later."""
        if self._var is None:
            raise RuntimeError("an unnamed scope cannot be made current")
        return self._var.set(self)

    def leave(self, token: contextvars.Token[ResourceScope | None]) -> None:
        """Undo :meth:`enter`."""
        assert self._var is not None
        self._var.reset(token)


def run_scope() -> ResourceScope:
    """A new run scope: ``async with run_scope():`` around a run."""
    return ResourceScope(_RUN)


def rollout_scope() -> ResourceScope:
    """A new rollout scope: ``async with rollout_scope():`` around one rollout attempt."""
    return ResourceScope(_ROLLOUT)


def current_run_scope() -> ResourceScope | None:
    """The innermost run scope here, or None outside any run."""
    return _RUN.get()


def current_rollout_scope() -> ResourceScope | None:
    """The innermost rollout scope here, or None outside any rollout."""
    return _ROLLOUT.get()
