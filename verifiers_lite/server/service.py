"""The server core without HTTP: admission, execution tasks, cancellation, lease expiry."""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

from verifiers_lite._util.clock import Clock, SystemClock
from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.server.protocol import (
    CancelDisposition,
    RolloutRequest,
    RolloutResultResponse,
    RolloutSample,
    RolloutStatus,
    WireErrorCategory,
    wire_category,
)

from .backend import RolloutBackend
from .errors import RolloutFailure
from .rollout_table import RegistryClosedError, RolloutRecord, RolloutRegistry

log = logging.getLogger(__name__)

# Persisted with artifacts only; never part of a result response.
PERSIST_ONLY_KEYS = ("trajectory_messages",)


class BackendFullError(VerifiersError):
    """Admission refused for now (HTTP 429)."""

    def __init__(self, retry_after_sec: float) -> None:
        super().__init__(f"backend full; retry after {retry_after_sec}s")
        self.retry_after_sec = retry_after_sec


class NotAcceptingError(RegistryClosedError):
    """Admission is closed because the server is shutting down (HTTP 503)."""


class RolloutService:
    """Owns the registry and the execution task of every rollout."""

    def __init__(
        self,
        backend: RolloutBackend,
        *,
        polling_lease_timeout_sec: float,
        result_retention_sec: float,
        clock: Clock | None = None,
    ) -> None:
        self.backend = backend
        self.clock: Clock = clock or SystemClock()
        self.registry = RolloutRegistry(
            polling_lease_timeout_sec=polling_lease_timeout_sec,
            result_retention_sec=result_retention_sec,
            clock=self.clock.now,
        )
        self.accepting = True
        self._sweeper: asyncio.Task[None] | None = None
        self._sweep_interval = max(0.01, min(1.0, polling_lease_timeout_sec / 4))

    # -- admission and execution -------------------------------------------------------------

    def admit(self, request: RolloutRequest) -> RolloutRecord:
        """Register and start one rollout, or raise (duplicate, full, not accepting)."""
        if not self.accepting or self.registry.closed:
            raise NotAcceptingError("server is shutting down")
        if self.registry.get(request.rollout_id) is not None:
            self.registry.add(request.rollout_id)  # raises DuplicateRolloutError
        limit = self.backend.max_admitted
        if limit is not None and self.registry.active_count >= limit:
            raise BackendFullError(self.backend.retry_after_sec)
        record = self.registry.add(request.rollout_id)
        record.task = asyncio.get_running_loop().create_task(
            self._run(record, request), name=f"rollout-{request.rollout_id}"
        )
        record.task.add_done_callback(functools.partial(self._done_callback, record))
        self.ensure_sweeper()
        return record

    async def _run(self, record: RolloutRecord, request: RolloutRequest) -> None:
        try:
            row = await self.backend.execute(request, record.ctx)
            result = self._success(record, row)
        except asyncio.CancelledError:
            result = self._failure(record, RolloutStatus.CANCELLED, None, "rollout cancelled")
        except RolloutFailure as exc:
            result = self._failure(record, None, exc.category, exc.message, exc.sample)
        except TimeoutError as exc:
            result = self._failure(record, None, WireErrorCategory.TIMEOUT, str(exc) or "timed out")
        except Exception as exc:  # a backend bug must still produce a final result
            log.exception("backend failed on rollout %s", record.rollout_id)
            result = self._failure(
                record, None, WireErrorCategory.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}"
            )
        self.registry.finish(record, result)

    def _done_callback(self, record: Any, task: Any) -> None:
        self._on_task_done(record, task)

    def _on_task_done(self, record: RolloutRecord, task: asyncio.Task[None]) -> None:
        # Also covers a task cancelled before its first step, when _run never ran.
        if record.result is None:
            self.registry.finish(
                record,
                self._failure(record, RolloutStatus.CANCELLED, None, "rollout cancelled"),
            )
        self.registry.mark_inactive(record)

    def _success(self, record: RolloutRecord, row: dict[str, Any]) -> RolloutResultResponse:
        sample = _sample(row)
        if record.cancel_disposition and record.ctx.cancel_requested.is_set():
            return self._failure(
                record, RolloutStatus.CANCELLED, None, "rollout cancelled", row, sample=sample
            )
        error = sample.error
        if isinstance(error, dict) and error:
            # The rollout ran but the agent failed: keep the row, report the failure.
            raw = str(error.get("category") or "")
            category = wire_category(raw)
            message = f"{raw}: {error.get('message', '')}" if raw else str(error.get("message", ""))
            return self._failure(record, None, category, message, row, sample=sample)
        if sample.remove_sample and sample.reward is not None:
            sample = sample.model_copy(update={"reward": None})  # removed: no trainable reward
        return RolloutResultResponse(
            rollout_id=record.rollout_id, status=RolloutStatus.SUCCESS, sample=sample
        )

    def _failure(
        self,
        record: RolloutRecord,
        status: RolloutStatus | None,
        category: WireErrorCategory | str | None,
        message: str,
        row: dict[str, Any] | None = None,
        *,
        sample: RolloutSample | None = None,
    ) -> RolloutResultResponse:
        if category is not None and category not in WireErrorCategory.__members__.values():
            category = WireErrorCategory.INTERNAL_ERROR
        if sample is None and row is not None:
            sample = _sample(row)
        if sample is not None:
            # A failure keeps its sample for inspection, never as training data.
            sample = sample.model_copy(update={"reward": None, "remove_sample": True})
        return RolloutResultResponse(
            rollout_id=record.rollout_id,
            status=status or RolloutStatus.FAILURE,
            sample=sample,
            err_category=WireErrorCategory(category) if category else None,
            err_message=message,
        )

    # -- cancellation ------------------------------------------------------------------------

    async def request_cancel(self, record: RolloutRecord) -> CancelDisposition:
        """Cooperative cancellation; idempotent (a repeat returns the first disposition)."""
        if record.cancel_disposition is not None:
            return record.cancel_disposition  # type: ignore[return-value]
        if record.result is not None:
            return "not_found"
        if record.status is RolloutStatus.QUEUED:
            disposition: CancelDisposition = "cancelled_queued"
        else:
            disposition = "cancelled_running"
        record.cancel_disposition = disposition
        await self._stop_execution(record, queued=disposition == "cancelled_queued")
        return disposition

    async def _stop_execution(self, record: RolloutRecord, *, queued: bool) -> None:
        """Cancel the work of a rollout, queued or running."""
        record.ctx.cancel_requested.set()
        if queued and record.task is not None:
            record.task.cancel()  # nothing has started: no cleanup to wait for, no slot taken
        else:
            await self._backend_cancel(record)

    async def _backend_cancel(self, record: RolloutRecord) -> None:
        try:
            await self.backend.cancel(record.rollout_id)
        except Exception:
            log.exception("backend.cancel failed for %s", record.rollout_id)

    async def cancel_ids(self, ids: list[str]) -> dict[str, CancelDisposition]:
        out: dict[str, CancelDisposition] = {}
        for rid in ids:
            record = self.registry.get(rid)
            if record is not None:
                await self.expire_if_due(record)
            out[rid] = "not_found" if record is None else await self.request_cancel(record)
        return out

    async def cancel_matching(self, prefix: str | None) -> dict[str, CancelDisposition]:
        """Cancel live rollouts (all, or those whose id starts with ``prefix``)."""
        ids = [
            r.rollout_id
            for r in self.registry
            if r.result is None and (prefix is None or r.rollout_id.startswith(prefix))
        ]
        return await self.cancel_ids(ids)

    def hard_cancel_all(self) -> int:
        """Cancel every remaining execution task (last shutdown resort)."""
        n = 0
        for record in self.registry:
            if record.active and record.task is not None and not record.task.done():
                record.task.cancel()
                n += 1
        return n

    # -- leases and retention ----------------------------------------------------------------

    def ensure_sweeper(self) -> None:
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep_forever())

    async def _sweep_forever(self) -> None:
        while True:
            await self.clock.sleep(self._sweep_interval)
            try:
                await self.sweep()
            except Exception:  # one bad record must not stop expiry for all the others
                log.exception("lease sweep failed")

    async def sweep(self) -> None:
        """Expire leases (failure + cancellation) and purge retained results."""
        for record in self.registry.expired_leases():
            try:
                await self.expire(record)
            except Exception:  # one bad record must not stop expiry for the others
                log.exception("lease expiry failed for %s", record.rollout_id)
        self.registry.purge()

    async def expire_if_due(self, record: RolloutRecord) -> None:
        """Decide lease expiry now, at the moment of a request, not at the next sweep."""
        if record.result is None and self.registry.clock() >= record.lease_deadline:
            await self.expire(record)

    async def expire(self, record: RolloutRecord) -> None:
        """Publish the lease_expired failure, then cancel the work (queued or running)."""
        queued = record.status is RolloutStatus.QUEUED  # publishing the result changes it
        published = self.registry.finish(
            record,
            RolloutResultResponse(
                rollout_id=record.rollout_id,
                status=RolloutStatus.FAILURE,
                err_category=WireErrorCategory.LEASE_EXPIRED,
                err_message="no result poll within the polling lease timeout",
            ),
        )
        if published:
            await self._stop_execution(record, queued=queued)

    async def stop_sweeper(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
            self._sweeper = None

    # -- health ------------------------------------------------------------------------------

    def lifecycle(self) -> dict[str, Any]:
        return {
            "accepting_rollouts": self.accepting and not self.registry.closed,
            "active_rollouts": self.registry.active_count,
        }


def _sample(row: dict[str, Any]) -> RolloutSample:
    return RolloutSample.model_validate(
        {k: v for k, v in row.items() if k not in PERSIST_ONLY_KEYS}
    )
