"""Graceful shutdown: the ordered phases run once when the server stops."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from .service import RolloutService

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ShutdownTimeouts:
    """Seconds for each waiting phase (defaults from the reference server)."""

    drain_sec: float = 10.0  # active work may finish normally
    cleanup_sec: float = 120.0  # after cooperative cancellation
    final_sec: float = 10.0  # after hard cancellation of what is left


class Lifecycle:
    """Runs the shutdown phases exactly once, however many times it is asked.

    Phases: stop_admission -> drain (wait for active work) -> request_cancel -> cleanup ->
    hard_cancel -> final_wait -> close_registry (wakes idle long polls with a retryable 503) ->
    backend_shutdown -> done. Phases whose wait is not needed are skipped. The waits are timed
    on the service's clock.
    """

    def __init__(self, service: RolloutService, timeouts: ShutdownTimeouts) -> None:
        self.service = service
        self.timeouts = timeouts
        self.phases: list[str] = []
        self._task: asyncio.Task[None] | None = None
        self._backend_shut = False

    @property
    def started(self) -> bool:
        return self._task is not None

    def _phase(self, name: str) -> None:
        self.phases.append(name)
        log.warning(
            "rollout server shutdown phase: %s (active=%d)",
            name,
            self.service.registry.active_count,
        )

    async def shutdown(self) -> None:
        """Run (or join) the shutdown sequence."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
        await asyncio.shield(self._task)

    async def _run(self) -> None:
        service, registry, t = self.service, self.service.registry, self.timeouts
        self._phase("stop_admission")
        service.accepting = False
        self._phase("drain")
        idle = await self._wait_idle(t.drain_sec)
        if not idle:
            self._phase("request_cancel")
            for record in registry:
                if record.active:
                    await service.request_cancel(record)
            self._phase("cleanup")
            idle = await self._wait_idle(t.cleanup_sec)
        if not idle:
            self._phase("hard_cancel")
            service.hard_cancel_all()
            self._phase("final_wait")
            await self._wait_idle(t.final_sec)
        self._phase("close_registry")
        registry.close()
        await service.stop_sweeper()
        await self.shutdown_backend()
        self._phase("done")

    async def _wait_idle(self, seconds: float) -> bool:
        """Wait until no rollout is active, at most ``seconds`` on the clock; False on timeout."""
        idle = asyncio.ensure_future(self.service.registry.wait_idle(None))
        timeout = asyncio.ensure_future(self.service.clock.sleep(seconds))
        try:
            done, _ = await asyncio.wait({idle, timeout}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            idle.cancel()
            timeout.cancel()
        return idle in done

    async def shutdown_backend(self) -> None:
        """Call backend.shutdown() at most once."""
        if self._backend_shut:
            return
        self._backend_shut = True
        self._phase("backend_shutdown")
        try:
            await self.service.backend.shutdown()
        except Exception:
            log.exception("backend.shutdown() failed")
