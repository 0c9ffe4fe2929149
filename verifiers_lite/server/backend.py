"""The :class:`RolloutBackend` protocol: what the server needs from whatever runs rollouts."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from verifiers_lite.server.protocol import RolloutRequest, RolloutStatus


class RolloutContext:
    """Handed to :meth:`RolloutBackend.execute`: report stages, observe cancellation.

    The server owns admission, leases and results; the backend only runs the work and calls
    :meth:`set_status` when it enters ``running`` or ``grading``.
    """

    def __init__(self, rollout_id: str, on_status: Callable[[RolloutStatus], None]) -> None:
        self.rollout_id = rollout_id
        self._on_status = on_status
        self._cancel_requested: asyncio.Event | None = None

    @property
    def cancel_requested(self) -> asyncio.Event:
        """Set when the rollout should stop (made on first use, not at admission)."""
        if self._cancel_requested is None:
            self._cancel_requested = asyncio.Event()
        return self._cancel_requested

    def bind(self, on_status: Callable[[RolloutStatus], None]) -> None:
        """Where stages are reported (the server binds it to the rollout's record)."""
        self._on_status = on_status

    def set_status(self, status: RolloutStatus | str) -> None:
        """Report a non-terminal stage (running or grading)."""
        status = RolloutStatus(status)
        if status.terminal:
            raise ValueError(
                "backends finish a rollout by returning or raising, not via set_status"
            )
        self._on_status(status)


@runtime_checkable
class RolloutBackend(Protocol):
    """Runs rollouts for :func:`create_rollout_server`.

    - ``max_admitted``: rollouts admitted at once (queued + running) before answering 429;
      ``None`` admits without bound. ``retry_after_sec`` is the hint sent with 429.
    - ``execute`` runs one rollout to the end and returns its output row (a dict; a
      ``trajectory_messages`` key is kept for persistence and never sent to clients) or raises
      :class:`~verifiers_lite.server.errors.RolloutFailure`. It must honour
      ``asyncio.CancelledError`` (hard cancellation at shutdown).
    - ``cancel`` requests cooperative cancellation of one rollout; ``health`` returns extra
      fields for ``GET /health``; ``shutdown`` is called once when the server stops.
    """

    max_admitted: int | None
    retry_after_sec: float

    async def execute(self, request: RolloutRequest, ctx: RolloutContext) -> dict[str, Any]: ...

    async def cancel(self, rollout_id: str) -> None: ...

    def health(self) -> dict[str, Any]: ...

    async def shutdown(self) -> None: ...
