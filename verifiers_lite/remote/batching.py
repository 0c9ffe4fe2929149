"""Coalescing of one client's requests into the server's batched routes, without added latency.

What is submitted in one event-loop turn goes out together at the end of that turn (no timer):
admissions as one ``POST /rollouts``, result polls as one ``POST /rollouts/results``. Each
caller gets back the answer the single route would have given it (a :class:`ItemReply`), so
the single path's retry schedules and error categories apply unchanged. A server without the
batched routes (404/405) is remembered, and its callers are told to use the single routes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from verifiers_lite.extras import missing_server_dependency
from verifiers_lite.protocol import RolloutAccepted

from .errors import RolloutProtocolError
from .transport import RawJSON, Reply, dumps

try:
    import httpx  # noqa: F401  (the server extra: a clear ImportError before anything runs)
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise missing_server_dependency(exc) from exc

T = TypeVar("T")
R = TypeVar("R")

#: Rollouts per batched request (the server takes up to 10,000) and bytes per admission body,
#: well under the server's default body limit; a larger turn is split over several requests.
MAX_ITEMS = 10_000
MAX_BODY_BYTES = 1 << 20
_ABSENT = frozenset({404, 405})  # the server has no such route

Send = Callable[..., Awaitable[Reply]]


class ItemReply:
    """One rollout's answer out of a batched answer, read like a whole response."""

    __slots__ = ("_data", "headers", "status_code")

    def __init__(self, status_code: int, data: Any) -> None:
        self.status_code = status_code
        self.headers: Mapping[str, str] = {}
        self._data = data

    @property
    def text(self) -> str:
        return json.dumps(self._data)

    def json(self) -> Any:
        return self._data


class TurnBatcher(Generic[T, R]):
    """Collects the items submitted during one event-loop turn and sends them with one call of
    ``send`` (a list of items in, one answer per item out) scheduled for the next turn."""

    def __init__(self, send: Callable[[list[T]], Awaitable[list[R]]]) -> None:
        self._send = send
        self._queued: list[tuple[T, asyncio.Future[R]]] = []
        self._running: set[asyncio.Task[None]] = set()

    def submit(self, item: T) -> asyncio.Future[R]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[R] = loop.create_future()
        self._queued.append((item, fut))
        if len(self._queued) == 1:
            loop.call_soon(self._flush)
        return fut

    def _flush(self) -> None:
        batch, self._queued = self._queued, []
        task = asyncio.get_running_loop().create_task(self._run(batch))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _run(self, batch: list[tuple[T, asyncio.Future[R]]]) -> None:
        live = [(item, fut) for item, fut in batch if not fut.done()]  # a caller may have given up
        if not live:
            return
        try:
            answers = await self._send([item for item, _ in live])
        except BaseException as exc:  # every caller sees the request's failure as its own
            for _, fut in live:
                if not fut.done():
                    fut.set_exception(exc) if isinstance(exc, Exception) else fut.cancel()
            if not isinstance(exc, Exception):
                raise
            return
        for (_, fut), answer in zip(live, answers, strict=True):
            if not fut.done():
                fut.set_result(answer)


class BatchRoutes:
    """The batched routes of one server, as one client uses them.

    :meth:`admit` and :meth:`poll` answer like ``POST /rollout`` and ``GET
    /rollout/{id}/result?wait=terminal`` would, or None when the batched route cannot serve
    (absent on this server, or a body over its limit): the caller then uses the single route.
    """

    def __init__(self, send: Send, grace_sec: float) -> None:
        self._send = send
        self._grace = grace_sec
        self.available: bool | None = None  # unknown until the first answer
        self._admissions: TurnBatcher[bytes, Reply | None] = TurnBatcher(self._admit_all)
        self._polls: TurnBatcher[RolloutAccepted, Reply | None] = TurnBatcher(self._poll_all)

    def admit(self, body: dict[str, Any]) -> Awaitable[Reply | None]:
        return self._admissions.submit(dumps(body))

    def poll(self, accepted: RolloutAccepted) -> Awaitable[Reply | None]:
        return self._polls.submit(accepted)

    async def _admit_all(self, bodies: list[bytes]) -> list[Reply | None]:
        chunks = _chunks(bodies)
        answers = await asyncio.gather(*(self._admit_chunk(c) for c in chunks))
        return [a for chunk in answers for a in chunk]

    async def _admit_chunk(self, bodies: list[bytes]) -> list[Reply | None]:
        payload = RawJSON(b'{"rollouts":[' + b",".join(bodies) + b"]}")
        resp = await self._send("POST", "/rollouts", json=payload)
        return self._items(resp, len(bodies), "admission")

    async def _poll_all(self, accepted: list[RolloutAccepted]) -> list[Reply | None]:
        chunks = [accepted[start : start + MAX_ITEMS] for start in range(0, len(accepted), MAX_ITEMS)]
        answers = await asyncio.gather(*(self._poll_chunk(c) for c in chunks))  # long polls: side by side
        return [a for chunk in answers for a in chunk]

    async def _poll_chunk(self, accepted: list[RolloutAccepted]) -> list[Reply | None]:
        leases = {a.rollout_id: a.polling_lease_token for a in accepted}
        wait = max(a.result_wait_timeout_sec for a in accepted) + self._grace
        resp = await self._send("POST", "/rollouts/results", json={"leases": leases}, timeout=wait)
        items = self._items(resp, len(leases), "result poll")
        by_id = dict(zip(leases, items, strict=True))
        return [by_id[a.rollout_id] for a in accepted]

    def _items(self, resp: Reply, n: int, what: str) -> list[Reply | None]:
        """Each rollout's answer out of a batched answer."""
        status = resp.status_code
        if status in _ABSENT:
            self.available = False
            return [None] * n
        if status == 413:  # this batch is over the server's body limit: each goes alone
            return [None] * n
        if status != 200:  # the whole request's answer (401, 503 while shutting down...) is each one's
            return [resp] * n
        self.available = True
        try:
            items = resp.json()["results"]
            if not isinstance(items, list) or len(items) != n or not all(isinstance(i, dict) for i in items):
                raise ValueError(f"{n} results expected")
            return [ItemReply(int(i.pop("status_code")), i) for i in items]
        except (ValueError, KeyError, TypeError) as exc:
            raise RolloutProtocolError(f"invalid batched {what} response: {exc}", status_code=status) from exc


def _chunks(bodies: Sequence[bytes]) -> list[list[bytes]]:
    """Bodies split into requests of at most MAX_ITEMS items and about MAX_BODY_BYTES bytes."""
    chunks: list[list[bytes]] = [[]]
    size = 0
    for body in bodies:
        if chunks[-1] and (len(chunks[-1]) >= MAX_ITEMS or size + len(body) > MAX_BODY_BYTES):
            chunks.append([])
            size = 0
        chunks[-1].append(body)
        size += len(body) + 1
    return chunks
