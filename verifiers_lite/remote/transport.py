"""HTTP transports of :class:`RolloutClient`: a user's httpx client, or a lean aiohttp one.

Both raise httpx's exception classes, so the client's retry categories (RemoteProtocolError,
NetworkError, ReadTimeout retried; connect/write/pool timeouts fatal) hold for either. aiohttp is
the default because httpx/httpcore/anyio cost ~1.5 ms CPU per request on small machines against
~0.15 ms for aiohttp (see benchmarks/server.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator, Mapping
from typing import Any, Protocol
from urllib.parse import urlencode

from pydantic_core import from_json, to_json

from verifiers_lite._util.extras import missing_server_dependency

try:
    import httpx
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise missing_server_dependency(exc) from exc

NDJSON = "application/x-ndjson"
#: Per-request defaults when a call gives no timeout (read/write, connect).
DEFAULT_TIMEOUT_SEC = 60.0
DEFAULT_CONNECT_SEC = 10.0
# Idle connections are dropped before the server's keep-alive timeout (uvicorn: 5 s), so a
# request never races the server closing the connection under it.
KEEPALIVE_SEC = 2.0
_SHARDS = 16


class Reply(Protocol):
    """The parts of a response the client reads (an ``httpx.Response`` is one)."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def text(self) -> str: ...

    def json(self) -> Any: ...


class Transport(Protocol):
    """Sends one request; never follows redirects; raises httpx exception classes.

    ``streams_lines`` is the transport's declared capability: True when :meth:`post_lines` can
    leave a streamed (``application/x-ndjson``) answer open as a :class:`LineStream`, so the
    client may ask for a rollout's result on its admission response; False when every answer
    is read whole (the client then polls for results).
    """

    streams_lines: bool

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str],
        timeout: float | None = None,
        connect: float | None = None,
        params: dict[str, str] | None = None,
        json_body: Any = None,
        shard_key: str | None = None,
    ) -> Reply: ...

    async def post_lines(
        self,
        url: str,
        *,
        headers: dict[str, str],
        json_body: Any,
        timeout: float | None = None,
        shard_key: str | None = None,
    ) -> Reply: ...

    async def aclose(self) -> None: ...


class RawJSON(bytes):
    """A JSON body serialised already (sent as is)."""


def dumps(body: Any) -> bytes:
    """Like httpx's ``json=``: compact, and NaN/inf refused on the client rather than sent."""
    if isinstance(body, RawJSON):
        return bytes(body)
    try:
        # pydantic's Rust serialiser is ~10x faster than json; its output is the same JSON.
        data = to_json(body, inf_nan_mode="constants")
    except ValueError:  # what it cannot serialise: json's own error is the one to raise
        data = None
    if data is None or b"NaN" in data or b"Infinity" in data:  # (a string may hold them too)
        return json.dumps(body, separators=(",", ":"), allow_nan=False).encode()
    return data


def loads(content: bytes) -> Any:
    """A response body's JSON (pydantic's Rust parser; Python's for what it refuses)."""
    try:
        return from_json(content)
    except ValueError:
        return json.loads(content)


class HttpxTransport:
    """A user's ``httpx.AsyncClient`` used as is, or sharded clients of our own."""

    streams_lines = False  # httpx reads each answer whole here

    def __init__(self, http_client: httpx.AsyncClient | None) -> None:
        self.owned = http_client is None
        # httpcore scans its whole pool on every request (O(connections)), so with a thousand
        # long polls one pool costs ~25 ms CPU per rollout; shards keep each pool small.
        self._shards = (
            [http_client]
            if http_client is not None
            else [
                httpx.AsyncClient(
                    limits=httpx.Limits(
                        max_connections=None,
                        max_keepalive_connections=64,
                        keepalive_expiry=KEEPALIVE_SEC,
                    ),
                    timeout=httpx.Timeout(
                        DEFAULT_TIMEOUT_SEC, connect=DEFAULT_CONNECT_SEC, pool=None
                    ),
                    follow_redirects=False,
                )
                for _ in range(_SHARDS)
            ]
        )

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str],
        timeout: float | None = None,
        connect: float | None = None,
        params: dict[str, str] | None = None,
        json_body: Any = None,
        shard_key: str | None = None,
    ) -> Reply:
        shards = self._shards
        shard = shards[hash(shard_key) % len(shards)] if shard_key else shards[0]
        limit: Any = httpx.USE_CLIENT_DEFAULT  # a user's client keeps its own defaults
        if timeout is not None:
            limit = httpx.Timeout(
                timeout, connect=min(timeout, connect or DEFAULT_CONNECT_SEC), pool=None
            )
        kwargs: dict[str, Any] = {}
        if json_body is not None:
            kwargs["content"] = dumps(json_body)
            headers = {**headers, "Content-Type": "application/json"}
        return await shard.request(
            method,
            url,
            headers=headers,
            params=params,
            timeout=limit,
            follow_redirects=False,
            **kwargs,
        )

    async def post_lines(
        self,
        url: str,
        *,
        headers: dict[str, str],
        json_body: Any,
        timeout: float | None = None,
        shard_key: str | None = None,
    ) -> Reply:
        """A plain POST, its answer read whole: this transport never streams lines."""
        return await self.request(
            "POST", url, headers=headers, json_body=json_body, timeout=timeout, shard_key=shard_key
        )

    async def aclose(self) -> None:
        if self.owned:
            for shard in self._shards:
                await shard.aclose()


class _Reply:
    """A fully read aiohttp response."""

    __slots__ = ("content", "headers", "status_code")

    def __init__(self, status_code: int, headers: Mapping[str, str], content: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return loads(self.content)


class _Lines:
    """Lines of a response body, of any length (aiohttp's ``readline`` refuses a line over its
    buffer limit, and a batch's answer or a rollout's state can be larger)."""

    __slots__ = ("_buffer", "_content", "_scanned", "_start")

    def __init__(self, content: Any) -> None:
        self._content = content
        self._buffer = bytearray()
        self._start = 0  # where the next line begins
        self._scanned = 0  # no newline between _start and here

    async def next(self) -> bytes:
        """The next line with its newline; at the end, what is left (empty: nothing)."""
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self._buffer[self._start : end + 1])
                self._start = self._scanned = end + 1
                return line
            del self._buffer[: self._start]  # lines already read: dropped once per chunk
            self._start, self._scanned = 0, len(self._buffer)
            chunk = await self._content.readany()
            if not chunk:
                line = bytes(self._buffer)
                self._buffer.clear()
                self._scanned = 0
                return line
            self._buffer += chunk


class LineStream(_Reply):
    """A streamed answer: its first line as the body; :meth:`next_line` reads the next one."""

    __slots__ = ("_lines", "_resp", "_transport")

    def __init__(
        self,
        status_code: int,
        headers: Mapping[str, str],
        first: bytes,
        resp: Any,
        lines: _Lines,
        transport: AiohttpTransport,
    ) -> None:
        super().__init__(status_code, headers, first)
        self._resp = resp
        self._lines = lines
        self._transport = transport

    async def next_line(self, timeout: float) -> _Reply:
        """The next line as a 200 reply (an empty body at the end of the stream)."""
        with self._transport._httpx_errors():
            try:
                async with asyncio.timeout(timeout):
                    line = await self._lines.next()
            except TimeoutError as exc:
                raise httpx.ReadTimeout("read timeout") from exc
        return _Reply(200, self.headers, line)

    def close(self) -> None:
        """Give the connection back (or drop it, mid-stream)."""
        self._resp.release()


class AiohttpTransport:
    """One aiohttp session per event loop (a session is bound to its loop), created lazily."""

    streams_lines = True  # post_lines leaves an ndjson answer open as a LineStream

    def __init__(self) -> None:
        import aiohttp

        self._aiohttp = aiohttp
        self._session: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timeouts: dict[tuple[float, float], Any] = {}

    def _current(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            aiohttp = self._aiohttp
            # No connection cap: every pending result is one long poll.
            connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=KEEPALIVE_SEC)
            self._session = aiohttp.ClientSession(connector=connector, auto_decompress=True)
            # aiohttp silently resends an idempotent request once after a dropped connection;
            # that would add retries the documented schedules do not have (private attribute, 3.10+).
            if hasattr(self._session, "_retry_connection"):
                self._session._retry_connection = False
            self._loop = loop
        return self._session

    def _timeout(self, read: float, connect: float) -> Any:
        key = (read, connect)
        limit = self._timeouts.get(key)
        if limit is None:
            limit = self._aiohttp.ClientTimeout(total=None, sock_connect=connect, sock_read=read)
            if len(self._timeouts) < 64:  # admission deadlines vary: do not grow without bound
                self._timeouts[key] = limit
        return limit

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str],
        timeout: float | None = None,
        connect: float | None = None,
        params: dict[str, str] | None = None,
        json_body: Any = None,
        shard_key: str | None = None,
    ) -> Reply:
        read = DEFAULT_TIMEOUT_SEC if timeout is None else timeout
        limit = self._timeout(read, min(read, connect or DEFAULT_CONNECT_SEC))
        data = None
        if json_body is not None:
            data = dumps(json_body)
            headers = {**headers, "Content-Type": "application/json"}
        if params:
            url = f"{url}?{urlencode(params)}"
        with self._httpx_errors():
            async with self._current().request(
                method, url, headers=headers, data=data, timeout=limit, allow_redirects=False
            ) as resp:
                content = await resp.read()
                return _Reply(resp.status, resp.headers, content)

    async def post_lines(
        self,
        url: str,
        *,
        headers: dict[str, str],
        json_body: Any,
        timeout: float | None = None,
        shard_key: str | None = None,
    ) -> Reply:
        """POST asking for ``application/x-ndjson``. A streamed answer comes back with its first
        line as the body and the response left open (a :class:`LineStream`); any other answer is
        read whole, as :meth:`request` reads it."""
        read = DEFAULT_TIMEOUT_SEC if timeout is None else timeout
        limit = self._timeout_connect_only(min(read, DEFAULT_CONNECT_SEC))
        headers = {
            **headers,
            "Content-Type": "application/json",
            "Accept": f"{NDJSON}, application/json",
        }
        with self._httpx_errors():
            resp = await self._current().request(
                "POST",
                url,
                headers=headers,
                data=dumps(json_body),
                timeout=limit,
                allow_redirects=False,
            )
            try:
                if resp.headers.get("Content-Type", "").startswith(NDJSON):
                    lines = _Lines(resp.content)
                    async with asyncio.timeout(read):
                        first = await lines.next()
                    stream = LineStream(resp.status, resp.headers, first, resp, lines, self)
                    resp = None  # the stream owns it now
                    return stream
                async with asyncio.timeout(read):
                    return _Reply(resp.status, resp.headers, await resp.read())
            except TimeoutError as exc:
                raise httpx.ReadTimeout("read timeout") from exc
            finally:
                if resp is not None:
                    resp.release()

    def _timeout_connect_only(self, connect: float) -> Any:
        # Reads are bounded per line by the caller: the second line comes after the rollout.
        return self._aiohttp.ClientTimeout(total=None, sock_connect=connect, sock_read=None)

    @contextlib.contextmanager
    def _httpx_errors(self) -> Iterator[None]:
        """aiohttp's errors raised as httpx's classes (the client's retry categories)."""
        aiohttp = self._aiohttp
        try:
            yield
        except aiohttp.ConnectionTimeoutError as exc:
            raise httpx.ConnectTimeout(str(exc) or "connect timeout") from exc
        except aiohttp.ServerTimeoutError as exc:  # sock_read
            raise httpx.ReadTimeout(str(exc) or "read timeout") from exc
        except aiohttp.ClientConnectorError as exc:
            raise httpx.ConnectError(str(exc)) from exc
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError) as exc:
            raise httpx.RemoteProtocolError(str(exc) or "server disconnected") from exc
        except aiohttp.ClientResponseError as exc:  # an unparsable response
            raise httpx.RemoteProtocolError(str(exc)) from exc
        except (aiohttp.ClientOSError, aiohttp.ClientConnectionResetError) as exc:
            raise httpx.ReadError(str(exc) or "connection reset") from exc  # reset mid-request
        except aiohttp.ClientError as exc:  # invalid URL and the like: not retried
            raise httpx.TransportError(f"{type(exc).__name__}: {exc}") from exc

    async def aclose(self) -> None:
        session, self._session = self._session, None
        # A session of another (finished) loop cannot be closed from here; it is just dropped.
        if session is not None and not session.closed and self._loop is asyncio.get_running_loop():
            await session.close()
