"""Rollout records: status, polling lease, long-poll wake-ups and result retention."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import heapq
import itertools
import json
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from verifiers_lite.protocol import RolloutResultResponse, RolloutStatus

from .backend import RolloutContext


class DuplicateRolloutError(KeyError):
    """The rollout_id is live or its result is still retained."""


class RegistryClosedError(RuntimeError):
    """The server is shutting down; clients should retry elsewhere or later."""


@dataclass(eq=False)
class RolloutRecord:
    """Server-side state of one admitted rollout."""

    rollout_id: str
    lease_token: str
    lease_deadline: float
    ctx: RolloutContext
    status: RolloutStatus = RolloutStatus.QUEUED
    result: RolloutResultResponse | None = None
    task: asyncio.Task[None] | None = None
    active: bool = True  # until execution, persistence and result are all final
    finished_at: float | None = None
    cancel_disposition: str | None = None
    # Parked long polls, resolved on the next change / the terminal result. Plain futures, not
    # Events: one future and one timer per poll instead of two tasks and an asyncio.wait.
    change_waiters: list[asyncio.Future[None]] = field(default_factory=list)
    terminal_waiters: list[asyncio.Future[None]] = field(default_factory=list)
    result_json: bytes | None = None  # the terminal result, serialised once for every poll

    def answer(self) -> bytes:
        """The body a result poll answers now: the terminal result, else the current status."""
        if self.result_json is not None:
            return self.result_json
        pending = {"rollout_id": self.rollout_id, "status": self.status.value, "sample": None,
                   "err_message": None, "err_category": None}
        return json.dumps(pending).encode()


class RolloutRegistry:
    """All rollouts the server knows about; the single owner of their state."""

    def __init__(
        self,
        *,
        polling_lease_timeout_sec: float,
        result_retention_sec: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.polling_lease_timeout_sec = polling_lease_timeout_sec
        self.result_retention_sec = result_retention_sec
        self.clock = clock
        self._records: dict[str, RolloutRecord] = {}
        # What can expire, soonest first, so a sweep touches only what is due, not every record.
        # A live rollout sits in ``_leases`` once, keyed by a deadline that renewals may have
        # pushed back since (it is re-keyed when it comes up); ``_retained`` holds finished ones.
        self._leases: list[tuple[float, int, RolloutRecord]] = []
        self._retained: list[tuple[float, int, RolloutRecord]] = []
        self._seq = itertools.count()  # ties: never compare records
        self.active_count = 0
        self.closed = False
        self._parked: set[asyncio.Future[None]] = set()  # every parked poll, woken at close
        self._idle = asyncio.Event()
        self._idle.set()

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[RolloutRecord]:
        return iter(list(self._records.values()))

    @property
    def held_polls(self) -> int:
        """Long polls parked now (a batched poll counts once)."""
        return len(self._parked)

    def get(self, rollout_id: str) -> RolloutRecord | None:
        return self._records.get(rollout_id)

    def add(self, rollout_id: str) -> RolloutRecord:
        """Register a new rollout with a fresh polling lease."""
        if self.closed:
            raise RegistryClosedError("server is shutting down")
        if rollout_id in self._records:
            raise DuplicateRolloutError(rollout_id)
        ctx = RolloutContext(rollout_id, _unbound)
        record = RolloutRecord(
            rollout_id=rollout_id,
            lease_token=secrets.token_urlsafe(24),
            lease_deadline=self.clock() + self.polling_lease_timeout_sec,
            ctx=ctx,
        )
        ctx.bind(functools.partial(self.set_status, record))
        self._records[rollout_id] = record
        heapq.heappush(self._leases, (record.lease_deadline, next(self._seq), record))
        self.active_count += 1
        self._idle.clear()
        return record

    def renew(self, record: RolloutRecord) -> None:
        record.lease_deadline = self.clock() + self.polling_lease_timeout_sec

    def _notify(self, record: RolloutRecord) -> None:
        _wake(record.change_waiters)

    def set_status(self, record: RolloutRecord, status: RolloutStatus) -> None:
        """Move a live rollout to a new non-terminal stage (ignored once terminal)."""
        if record.result is not None or status == record.status:
            return
        record.status = status
        self._notify(record)

    def finish(self, record: RolloutRecord, result: RolloutResultResponse) -> bool:
        """Publish the terminal result; the first one wins. Returns whether it was published."""
        if record.result is not None:
            return False
        record.result = result
        record.status = result.status
        record.result_json = result.model_dump_json().encode()
        _wake(record.terminal_waiters)
        self._notify(record)
        return True

    def mark_inactive(self, record: RolloutRecord) -> None:
        """Execution and persistence are over; retention starts."""
        if not record.active:
            return
        record.active = False
        record.finished_at = self.clock()
        heapq.heappush(self._retained, (record.finished_at, next(self._seq), record))
        self.active_count -= 1
        if self.active_count == 0:
            self._idle.set()

    async def wait_idle(self, timeout: float | None) -> bool:
        """Wait until no rollout is active; False on timeout."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def wait_change(
        self, record: RolloutRecord, seen: RolloutStatus | None, timeout: float
    ) -> None:
        """Long-poll: return at once if terminal or already changed from ``seen``."""
        if record.result is not None or (seen is not None and record.status != seen):
            return
        if self.closed:
            raise RegistryClosedError("server is shutting down")
        await self._park(record.change_waiters, timeout)
        if record.result is None and self.closed:
            raise RegistryClosedError("server is shutting down")

    async def wait_terminal(self, record: RolloutRecord, timeout: float) -> None:
        """Long-poll for the terminal result only (intermediate stages do not wake it)."""
        if record.result is not None:
            return
        if self.closed:
            raise RegistryClosedError("server is shutting down")
        await self._park(record.terminal_waiters, timeout)
        if record.result is None and self.closed:
            raise RegistryClosedError("server is shutting down")

    async def wait_any_terminal(self, records: list[RolloutRecord], timeout: float) -> None:
        """Long-poll many rollouts at once: return when one of them is terminal (at once if one
        already is), the registry closes, or ``timeout`` passes."""
        if any(r.result is not None for r in records):
            return
        if self.closed:
            raise RegistryClosedError("server is shutting down")
        await self._park_on([r.terminal_waiters for r in records], timeout)

    async def _park(self, waiters: list[asyncio.Future[None]], timeout: float) -> None:
        """Wait until ``waiters`` is woken, the registry closes, or ``timeout`` passes."""
        await self._park_on([waiters], timeout)

    async def _park_on(self, lists: list[list[asyncio.Future[None]]], timeout: float) -> None:
        """One future parked on every list of ``lists``: the first wake-up of any resolves it."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        for waiters in lists:
            waiters.append(fut)
        self._parked.add(fut)
        timer = loop.call_later(timeout, _resolve, fut)
        try:
            await fut
        finally:
            timer.cancel()
            self._parked.discard(fut)
            # A list that woke it dropped it with the wake-up; the others (and every list after a
            # timeout, a cancellation or a close) still hold it.
            for waiters in lists:
                with contextlib.suppress(ValueError):
                    waiters.remove(fut)

    def expired_leases(self) -> list[RolloutRecord]:
        """Live rollouts whose lease has run out (only those due are looked at)."""
        now = self.clock()
        heap, expired = self._leases, []
        while heap and heap[0][0] <= now:
            _, _, record = heapq.heappop(heap)
            if record.result is not None:
                continue  # finished: its lease no longer matters
            if record.lease_deadline > now:  # renewed since it was keyed
                heapq.heappush(heap, (record.lease_deadline, next(self._seq), record))
            else:
                expired.append(record)
        return expired

    def purge(self) -> int:
        """Drop finished rollouts whose retention has passed; returns how many."""
        now, heap, dropped = self.clock(), self._retained, 0
        while heap and now - heap[0][0] >= self.result_retention_sec:
            _, _, record = heapq.heappop(heap)
            if self._records.get(record.rollout_id) is record and record.result is not None:
                del self._records[record.rollout_id]
                dropped += 1
        return dropped

    def close(self) -> None:
        """Stop admitting and wake every pending long poll (they answer a retryable 503)."""
        self.closed = True
        parked, self._parked = self._parked, set()
        for fut in parked:
            _resolve(fut)


def _unbound(status: RolloutStatus) -> None:
    raise RuntimeError("a rollout context reported a stage before its record existed")


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def _wake(waiters: list[asyncio.Future[None]]) -> None:
    for fut in waiters:
        _resolve(fut)
    waiters.clear()
