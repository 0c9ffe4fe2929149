"""Rollout records: status, polling lease, long-poll wake-ups and result retention."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import heapq
import itertools
import json
import secrets
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.server.protocol import RolloutResultResponse, RolloutStatus

from .backend import RolloutContext


class DuplicateRolloutError(VerifiersError, KeyError):
    """The rollout_id is live or its result is still retained."""


class RegistryClosedError(VerifiersError, RuntimeError):
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
    # Parked long polls and result streams, called on the next change / the terminal result
    # (then dropped). Plain callbacks, not Events: a parked poll is one future and one timer
    # instead of two tasks and an asyncio.wait, and a stream is told which rollout finished.
    change_waiters: list[Callable[[], None]] = field(default_factory=list)
    terminal_waiters: list[Callable[[], None]] = field(default_factory=list)
    result_json: bytes | None = None  # the terminal result, serialised once for every poll

    def answer(self) -> bytes:
        """The body a result poll answers now: the terminal result, else the current status."""
        if self.result_json is not None:
            return self.result_json
        pending = {
            "rollout_id": self.rollout_id,
            "status": self.status.value,
            "sample": None,
            "err_message": None,
            "err_category": None,
        }
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
        self._tokens = _lease_tokens()
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
            lease_token=next(self._tokens),
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

    async def stream_terminal(
        self,
        records: list[RolloutRecord],
        timeout: float,
        deliver: Callable[[list[RolloutRecord]], Awaitable[None]],
    ) -> None:
        """Long-poll many rollouts as a stream: ``deliver`` is given those that are terminal (at
        once for those that already are), then each batch that finishes together, until all are
        delivered, the registry closes, or ``timeout`` passes (counted from the call)."""
        if self.closed:
            raise RegistryClosedError("server is shutting down")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        ready = [r for r in records if r.result is not None]
        pending = {r for r in records if r.result is None}
        wake: asyncio.Future[None] | None = None

        def finished(record: RolloutRecord) -> None:
            ready.append(record)
            if wake is not None:
                _resolve(wake)

        hooks = {r: functools.partial(finished, r) for r in pending}
        for record, hook in hooks.items():
            record.terminal_waiters.append(hook)
        try:
            while True:
                if ready:
                    batch, ready[:] = list(ready), []
                    pending.difference_update(batch)
                    await deliver(batch)
                    continue
                if not pending or self.closed or loop.time() >= deadline:
                    return
                wake = loop.create_future()
                await self._park_future(wake, loop.call_at(deadline, _resolve, wake))
                wake = None
        finally:
            for record in pending:  # still parked: a woken list dropped its hook already
                with contextlib.suppress(ValueError):
                    record.terminal_waiters.remove(hooks[record])

    async def _park(self, waiters: list[Callable[[], None]], timeout: float) -> None:
        """Wait until ``waiters`` is woken, the registry closes, or ``timeout`` passes."""
        await self._park_on([waiters], timeout)

    async def _park_on(self, lists: list[list[Callable[[], None]]], timeout: float) -> None:
        """One future parked on every list of ``lists``: the first wake-up of any resolves it."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        wake = functools.partial(_resolve, fut)
        for waiters in lists:
            waiters.append(wake)
        try:
            await self._park_future(fut, loop.call_later(timeout, _resolve, fut))
        finally:
            # A list that woke it dropped it with the wake-up; the others (and every list after a
            # timeout, a cancellation or a close) still hold it.
            for waiters in lists:
                with contextlib.suppress(ValueError):
                    waiters.remove(wake)

    async def _park_future(self, fut: asyncio.Future[None], timer: asyncio.TimerHandle) -> None:
        """Await ``fut`` as a held poll: woken by its timer, a wake-up, or the registry closing."""
        self._parked.add(fut)
        try:
            await fut
        finally:
            timer.cancel()
            self._parked.discard(fut)

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


def _lease_tokens() -> Iterator[str]:
    """Polling lease tokens: 192 random bits each, URL-safe (``secrets.token_urlsafe(24)``'s
    form), drawn from the OS a thousand at a time instead of one system call per rollout."""
    while True:
        pool = base64.urlsafe_b64encode(secrets.token_bytes(24 * 1024)).decode("ascii")
        for start in range(0, len(pool), 32):
            yield pool[start : start + 32]


def _unbound(status: RolloutStatus) -> None:
    raise RuntimeError("a rollout context reported a stage before its record existed")


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def _wake(waiters: list[Callable[[], None]]) -> None:
    woken, waiters[:] = list(waiters), []
    for wake in woken:
        wake()
