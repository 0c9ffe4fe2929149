"""Coalescing of one client's requests into the server's batched routes, without added latency.

What is submitted in one event-loop turn goes out together at the end of that turn (no timer):
admissions as one ``POST /rollouts``, result polls as one ``POST /rollouts/results``. Each
caller gets back the answer the single route would have given it (a :class:`ItemReply`), so
the single path's retry schedules and error categories apply unchanged. A server without the
batched routes (404/405) is remembered, and its callers are told to use the single routes.

Admissions that will wait for their results can ask for them on the admission response itself
(``application/x-ndjson``, over a transport that reads lines): each result arrives as a line
when its rollout ends, with no poll request at all; what the stream does not bring is polled.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from verifiers_lite._util.extras import missing_server_dependency
from verifiers_lite.server.protocol import RolloutAccepted

from .errors import RolloutProtocolError
from .polling import Send, checked_result
from .transport import LineStream, RawJSON, Reply, dumps

try:
    import httpx  # noqa: F401  (the server extra: a clear ImportError before anything runs)
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise missing_server_dependency(exc) from exc

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

#: Rollouts per batched request (the server takes up to 10,000) and bytes per admission body,
#: well under the server's default body limit; a larger turn is split over several requests.
MAX_ITEMS = 10_000
MAX_BODY_BYTES = 1 << 20
_ABSENT = frozenset({404, 405})  # the server has no such route

#: POST a JSON body asking for NDJSON: a :class:`LineStream` if the server streams, else a reply.
PostLines = Callable[[str, RawJSON], Awaitable[Reply]]
#: A rollout's result line off its admission stream: its JSON, or None if the line did not come.
ResultLine = asyncio.Future[dict[str, Any] | None]


class ItemReply:
    """One rollout's answer out of a batched answer, read like a whole response."""

    __slots__ = ("_data", "headers", "result_line", "status_code")

    def __init__(self, status_code: int, data: Any) -> None:
        self.status_code = status_code
        self.headers: Mapping[str, str] = {}
        self._data = data
        #: An admission's result line, when it was asked for on the admission response.
        self.result_line: ResultLine | None = None

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
            # The task's first step runs once this turn's ready callbacks have: it takes what
            # they submitted too.
            task = loop.create_task(self._run())
            self._running.add(task)
            task.add_done_callback(self._running.discard)
        return fut

    async def _run(self) -> None:
        batch, self._queued = self._queued, []
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

    def __init__(self, send: Send, grace_sec: float, post_lines: PostLines | None = None) -> None:
        self._send = send
        self._grace = grace_sec
        self._post_lines = post_lines
        self.available: bool | None = None  # unknown until the first answer
        self._admissions: TurnBatcher[bytes, Reply | None] = TurnBatcher(self._admit_all)
        self._streamed: TurnBatcher[bytes, Reply | None] = TurnBatcher(self._admit_all_streamed)
        self._polls: TurnBatcher[RolloutAccepted, Reply | None] = TurnBatcher(self._poll_all)
        self._reading: set[asyncio.Task[None]] = set()

    def admit(
        self, body: dict[str, Any], *, stream_result: bool = False
    ) -> Awaitable[Reply | None]:
        """``stream_result``: the caller will wait for this rollout's result, so an admitted
        one's :class:`ItemReply` may carry its ``result_line`` (over a transport that reads
        streams, from a server that streams)."""
        batcher = (
            self._streamed if stream_result and self._post_lines is not None else self._admissions
        )
        return batcher.submit(dumps(body))

    def poll(self, accepted: RolloutAccepted) -> Awaitable[Reply | None]:
        return self._polls.submit(accepted)

    async def _admit_all(self, bodies: list[bytes]) -> list[Reply | None]:
        chunks = _chunks(bodies)
        answers = await asyncio.gather(*(self._admit_chunk(c) for c in chunks))
        return [a for chunk in answers for a in chunk]

    async def _admit_chunk(self, bodies: list[bytes]) -> list[Reply | None]:
        resp = await self._send("POST", "/rollouts", json=_admission_payload(bodies))
        return self._items(resp, len(bodies), "admission")

    async def _admit_all_streamed(self, bodies: list[bytes]) -> list[Reply | None]:
        chunks = _chunks(bodies)
        if len(chunks) == 1:  # the usual case: no task of its own
            return await self._admit_chunk_streamed(chunks[0])
        answers = await asyncio.gather(*(self._admit_chunk_streamed(c) for c in chunks))
        return [a for chunk in answers for a in chunk]

    async def _admit_chunk_streamed(self, bodies: list[bytes]) -> list[Reply | None]:
        assert self._post_lines is not None
        resp = await self._post_lines("/rollouts", _admission_payload(bodies))
        if not isinstance(resp, LineStream):
            return self._items(resp, len(bodies), "admission")
        try:
            items = self._items(resp, len(bodies), "admission")
            lines = self._expect_lines(items)
        except BaseException:
            resp.close()
            raise
        if lines:
            task = asyncio.get_running_loop().create_task(self._read_lines(resp, lines, items))
            self._reading.add(task)
            task.add_done_callback(self._reading.discard)
        else:
            resp.close()
        return items

    @staticmethod
    def _expect_lines(items: list[Reply | None]) -> dict[str, ResultLine]:
        """A result line awaited for each admitted item, handed to its caller on its reply."""
        loop = asyncio.get_running_loop()
        lines: dict[str, ResultLine] = {}
        for item in items:
            if isinstance(item, ItemReply) and item.status_code == 202:
                rollout_id = item.json().get("rollout_id")
                if isinstance(rollout_id, str):
                    item.result_line = lines[rollout_id] = loop.create_future()
        return lines

    async def _read_lines(
        self, stream: LineStream, lines: dict[str, ResultLine], items: list[Reply | None]
    ) -> None:
        """Hand each result line to its rollout's caller; at the end of the stream (or if it
        breaks) the rollouts without a line get None and are polled."""
        wait = max(
            float(i.json().get("result_wait_timeout_sec", 0)) for i in items if i is not None
        )
        pending = dict(lines)
        try:
            while pending:
                line = await stream.next_line(wait + self._grace)
                if not line.content:
                    break
                data = checked_result(line)  # a result poll's answer, checked as one
                line_for = pending.pop(str(data.get("rollout_id")), None)
                if line_for is None:
                    raise ValueError(f"unexpected result line: {line.text[:200]}")
                if not line_for.done():
                    line_for.set_result(data)
        except Exception as exc:  # a broken stream or a bad line: those left are polled instead
            log.debug(
                "result stream ended early (%d rollouts left to polls): %r", len(pending), exc
            )
        finally:
            stream.close()
            for line_for in pending.values():
                if not line_for.done():
                    line_for.set_result(None)

    async def _poll_all(self, accepted: list[RolloutAccepted]) -> list[Reply | None]:
        chunks = [
            accepted[start : start + MAX_ITEMS] for start in range(0, len(accepted), MAX_ITEMS)
        ]
        # long polls: side by side
        answers = await asyncio.gather(*(self._poll_chunk(c) for c in chunks))
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
        # the whole request's answer (401, 503 while shutting down...) is each one's
        if status != 200:
            return [resp] * n
        self.available = True
        try:
            items = resp.json()["results"]
            if (
                not isinstance(items, list)
                or len(items) != n
                or not all(isinstance(i, dict) for i in items)
            ):
                raise ValueError(f"{n} results expected")
            return [ItemReply(int(i.pop("status_code")), i) for i in items]
        except (ValueError, KeyError, TypeError) as exc:
            raise RolloutProtocolError(
                f"invalid batched {what} response: {exc}", status_code=status
            ) from exc


def _admission_payload(bodies: list[bytes]) -> RawJSON:
    return RawJSON(b'{"rollouts":[' + b",".join(bodies) + b"]}")


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
