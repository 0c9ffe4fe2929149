"""Response cache: a :class:`ModelClient` wrapper that stores model answers in SQLite.

A response is keyed by everything that decides it: the endpoint's identity, the model, the
messages, the tools, the sampling arguments (``seed`` included), the rollout's index in its group
and which occurrence of these exact messages it is within the rollout. So re-running a cell
after changing only the rubric re-scores without calling the model, while the rollouts of one
GRPO group (temperature > 0) keep their distinct samples, and different sampling arguments never
share an entry.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from verifiers_lite.clients.adaptive import report_answered_here
from verifiers_lite.core.messages import Message
from verifiers_lite.core.model_client import ChatResponse, ModelClient, ModelClientLike, TurnUsage

CACHE_ENV_VAR = "VERIFIERS_LITE_CACHE"
_SCHEMA = """CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY, model TEXT NOT NULL, endpoint TEXT NOT NULL,
    response TEXT NOT NULL, created REAL NOT NULL)"""


def default_cache_path() -> Path:
    """``$VERIFIERS_LITE_CACHE/responses.sqlite`` (default ``~/.cache/verifiers_lite``)."""
    root = os.environ.get(CACHE_ENV_VAR) or Path.home() / ".cache" / "verifiers_lite"
    return Path(root) / "responses.sqlite"


@dataclass
class _RolloutSlot:
    """Which rollout a model call belongs to, and how often it sent each message list so far."""

    index: int
    seen: Counter[str] = field(default_factory=Counter)


_ROLLOUT: contextvars.ContextVar[_RolloutSlot | None] = contextvars.ContextVar(
    "verifiers_lite_cache_rollout", default=None
)


def enter_rollout(index: int) -> contextvars.Token[_RolloutSlot | None]:
    """Mark the running task as rollout ``index`` of its group (for the cache key); reset with
    :func:`leave_rollout`. Each rollout runs in its own task, so slots never mix."""
    return _ROLLOUT.set(_RolloutSlot(index))


def leave_rollout(token: contextvars.Token[_RolloutSlot | None]) -> None:
    _ROLLOUT.reset(token)


class ResponseCache:
    """The on-disk store: one SQLite file, safe across threads and processes (WAL).

    Args:
        path: the SQLite file (its folder is made); None: the default cache file.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        if self.path.is_dir():
            raise ValueError(
                f"cache path {str(self.path)!r} is a directory; give a file path such as "
                f"{str(self.path / 'responses.sqlite')!r}"
            )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, check_same_thread=False, timeout=30.0, isolation_level=None
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise ValueError(
                f"cannot open the response cache at {str(self.path)!r}: {exc}"
            ) from exc
        self._lock = threading.Lock()

    @classmethod
    def coerce(cls, cache: Any) -> ResponseCache | None:
        """``True`` -> the default file, a path -> that file, a ResponseCache -> itself,
        ``False``/``None`` -> no cache. Anything else is a ValueError."""
        if cache is None or cache is False:
            return None
        if cache is True:
            return cls()
        if isinstance(cache, cls):
            return cache
        if isinstance(cache, (str, os.PathLike)):
            return cls(cache)
        raise ValueError(f"cache must be True, a file path or a ResponseCache, got {cache!r}")

    def get(self, key: str) -> ChatResponse | None:
        with self._lock:
            row = self._db.execute(
                "SELECT response FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return _decode(row[0]) if row else None

    def put(self, key: str, model: str, endpoint: str, response: ChatResponse) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?)",
                (key, model, endpoint, _encode(response), time.time()),
            )

    def stats(self) -> dict[str, Any]:
        """Entries in all and per (endpoint, model), and the file's size in bytes."""
        with self._lock:
            total = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
            per = self._db.execute(
                "SELECT endpoint, model, COUNT(*) FROM responses GROUP BY endpoint, model ORDER BY 3 DESC"
            ).fetchall()
        size = sum(
            p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file()
        )
        return {
            "path": str(self.path),
            "entries": int(total),
            "bytes": size,
            "by_model": [{"endpoint": e, "model": m, "entries": int(n)} for e, m, n in per],
        }

    def clear(self, model: str | None = None) -> int:
        """Delete every entry (or only ``model``'s); returns how many were deleted."""
        with self._lock:
            if model is None:
                cur = self._db.execute("DELETE FROM responses")
            else:
                cur = self._db.execute("DELETE FROM responses WHERE model = ?", (model,))
            self._db.execute("VACUUM")
        return int(cur.rowcount)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"


def endpoint_identity(client: ModelClientLike) -> str:
    """What names an endpoint across processes: its ``cache_identity`` (the embedded model
    names its model file, not its random port), else its base URL, else its class."""
    if isinstance(client, list) and client:  # a ClientGroup: processes serving one model
        return endpoint_identity(client[0])
    ident = getattr(client, "cache_identity", None) or getattr(client, "base_url", None)
    return str(ident) if ident else f"{type(client).__module__}.{type(client).__qualname__}"


def cache_key(
    endpoint: str,
    model: str,
    messages: list[Message],
    tools: list[dict[str, Any]] | None,
    sampling_args: dict[str, Any] | None,
    rollout_index: int,
    occurrence: int,
) -> str:
    """The SHA-256 of the canonical JSON of everything that decides a response."""
    payload = json.dumps(
        {
            "endpoint": endpoint,
            "model": model,
            "messages": messages,
            "tools": tools or None,
            "sampling_args": sampling_args or {},
            "rollout_index": rollout_index,
            "occurrence": occurrence,
        },
        sort_keys=True,
        ensure_ascii=False,
        default=repr,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CachedClient:
    """A :class:`ModelClient` answering from a :class:`ResponseCache` when it can, else from
    ``inner`` (and storing the answer). Errors are never cached. ``hits``/``misses`` count calls.

    Args:
        inner: the client that answers what the cache does not hold.
        cache: ``True`` (the default file), a file path or a :class:`ResponseCache`.
        call: the request function answering misses (default ``inner.chat``; ``ChatClient`` passes
            its uncached request path).
    """

    def __init__(self, inner: ModelClient, cache: Any = True, *, call: Any = None) -> None:
        store = ResponseCache.coerce(cache)
        if store is None:
            raise ValueError("CachedClient needs a cache (True, a path or a ResponseCache)")
        self.inner = inner
        self.cache = store
        self.identity = endpoint_identity(inner)
        self._call = call or inner.chat  # ChatClient's own hook passes its uncached request path
        self.hits = 0
        self.misses = 0

    @property
    def base_url(self) -> Any:
        """The wrapped endpoint's URL (for routing, logs and executors)."""
        return getattr(self.inner, "base_url", None)

    @property
    def api_key(self) -> Any:
        return getattr(self.inner, "api_key", None)

    @property
    def text_only(self) -> bool | str:
        """The wrapped endpoint's ``text_only`` (what content its model reads)."""
        return getattr(self.inner, "text_only", False)

    def cache_counts(self) -> tuple[int, int]:
        """(hits, misses) so far."""
        return self.hits, self.misses

    async def chat(
        self,
        model: str,
        messages: list[Message],
        sampling_args: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatResponse:
        slot = _ROLLOUT.get()
        index, occurrence = 0, 0
        if slot is not None:
            seen_key = json.dumps([messages, tools], sort_keys=True, default=repr)
            index, occurrence = slot.index, slot.seen[seen_key]
            slot.seen[seen_key] += 1
        key = cache_key(self.identity, model, messages, tools, sampling_args, index, occurrence)
        cached = self.cache.get(key)
        if cached is not None:
            self.hits += 1
            report_answered_here()  # an adaptive limit learns nothing from it
            return cached
        response: ChatResponse = await self._call(model, messages, sampling_args, tools)
        self.misses += 1
        self.cache.put(key, model, self.identity, response)
        return response

    def __repr__(self) -> str:
        return f"CachedClient({self.inner!r}, {self.cache!r})"


def cache_counts(clients: list[CachedClient]) -> tuple[int, int] | None:
    """Summed (hits, misses) of ``clients``; None when there are none."""
    counts = [c.cache_counts() for c in clients]
    if not counts:
        return None
    return sum(h for h, _ in counts), sum(m for _, m in counts)


def _encode(r: ChatResponse) -> str:
    return json.dumps(
        {
            "message": r.message,
            "finish_reason": r.finish_reason,
            "usage": [
                r.usage.prompt_tokens,
                r.usage.completion_tokens,
                r.usage.reasoning_tokens,
                r.usage.cached_prompt_tokens,
                r.usage.extra,
            ],
            "prompt_ids": r.prompt_ids,
            "completion_ids": r.completion_ids,
            "completion_logprobs": r.completion_logprobs,
            "system_fingerprint": r.system_fingerprint,
            "model": r.model,
        },
        ensure_ascii=False,
    )


def _decode(text: str) -> ChatResponse:
    d = json.loads(text)
    return ChatResponse(
        message=d["message"],
        finish_reason=d.get("finish_reason"),
        usage=TurnUsage(*d.get("usage", [0, 0])),
        prompt_ids=d.get("prompt_ids"),
        completion_ids=d.get("completion_ids"),
        completion_logprobs=d.get("completion_logprobs"),
        system_fingerprint=d.get("system_fingerprint"),
        model=d.get("model"),
    )


class CacheSummary(TypedDict):
    """The response cache's use in the run (in-process runs with ``cache=``), as the run's metadata keeps it."""

    path: str  #: the cache file
    hits: int  #: requests answered from the cache
    misses: int  #: requests sent to the model (then stored)
    hit_ratio: float | None  #: hits / (hits + misses); None when there was no request


class CacheMeter:
    """Hits and misses of one run over the caching clients it uses (deltas: a client that
    caches on its own may have served earlier runs)."""

    def __init__(self, clients: list[CachedClient], path: str) -> None:
        self.clients = clients
        self.path = path
        self._start = cache_counts(clients) or (0, 0)

    def counts(self) -> tuple[int, int]:
        hits, misses = cache_counts(self.clients) or (0, 0)
        return hits - self._start[0], misses - self._start[1]

    def summary(self) -> CacheSummary:
        """The run's use of the cache, for its metadata."""
        hits, misses = self.counts()
        total = hits + misses
        return {
            "path": self.path,
            "hits": hits,
            "misses": misses,
            "hit_ratio": hits / total if total else None,
        }
