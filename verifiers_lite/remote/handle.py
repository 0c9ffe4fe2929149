"""``RolloutHandle``: an awaitable view of one admitted rollout, polled in the background."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator
from typing import Any

from verifiers_lite.server.protocol import RolloutAccepted, RolloutResultResponse, RolloutStatus


class RolloutHandle:
    """Returned by :meth:`RolloutClient.run_rollout_async` once the server admitted the rollout.

    ``await handle`` returns the terminal :class:`RolloutResultResponse`. ``cancel()`` stops
    local polling only; use :meth:`RolloutClient.cancel_rollout` to cancel on the server.
    """

    def __init__(
        self,
        accepted: RolloutAccepted,
        poll: Callable[[RolloutHandle], Awaitable[RolloutResultResponse]],
    ) -> None:
        self.rollout_id = accepted.rollout_id
        self.accepted = accepted
        self._status = RolloutStatus(accepted.status)
        self._latest: RolloutResultResponse | None = None
        self._changed = asyncio.Event()
        self._task: asyncio.Task[RolloutResultResponse] = asyncio.get_running_loop().create_task(
            self._run(poll), name=f"poll-{self.rollout_id}"
        )
        self._task.add_done_callback(lambda _t: self._wake())

    async def _run(
        self, poll: Callable[[RolloutHandle], Awaitable[RolloutResultResponse]]
    ) -> RolloutResultResponse:
        return await poll(self)

    def _wake(self) -> None:
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    def _observe(self, result: RolloutResultResponse) -> None:
        """Called by the poller with every result response."""
        self._latest = result
        if result.status != self._status:
            self._status = result.status
        self._wake()

    @property
    def status(self) -> RolloutStatus:
        """The most recently observed status."""
        return self._status

    @property
    def latest_result(self) -> RolloutResultResponse | None:
        """The latest result response; ``None`` before the first poll answered."""
        return self._latest

    def done(self) -> bool:
        """Whether polling has ended (result, error or local cancellation)."""
        return self._task.done()

    def cancel(self) -> bool:
        """Stop local polling; the server is not contacted."""
        return self._task.cancel()

    def __await__(self) -> Generator[Any, None, RolloutResultResponse]:
        return self._task.__await__()

    async def wait_for_completion(self) -> RolloutResultResponse:
        """Same as ``await handle``."""
        return await self._task

    async def _wait_rank(self, rank: int) -> RolloutStatus:
        while True:
            if self._status.rank >= rank:
                return self._status
            if self._task.done():
                self._task.result()  # re-raise a polling error or local cancellation
                return self._status
            await self._changed.wait()

    async def wait_for_running(self) -> RolloutStatus:
        """Return the latest status once running is reached or passed (or the rollout ended)."""
        return await self._wait_rank(RolloutStatus.RUNNING.rank)

    async def wait_for_grading(self) -> RolloutStatus:
        """Return the latest status once grading is reached or passed (or the rollout ended)."""
        return await self._wait_rank(RolloutStatus.GRADING.rank)

    def __repr__(self) -> str:
        return f"RolloutHandle({self.rollout_id!r}, status={self._status.value})"
