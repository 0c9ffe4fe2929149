"""Many endpoints: each group sticks to one endpoint; groups spread evenly; failures reported."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from verifiers_lite.clients.adaptive import AdaptiveLimit
from verifiers_lite.clients.slots import acquire
from verifiers_lite.core.messages import Message
from verifiers_lite.core.model_client import ChatResponse, ModelClient

FAILING_STREAK = 5  # consecutive failed requests before an endpoint is reported as failing
# A failing endpoint gets no new groups while another is healthy, except one probe group after
# this many seconds without a new failure (so a restarted server is taken back).
FAILING_PROBE_S = 30.0


@dataclass(slots=True)
class EndpointStats:
    """Per-endpoint counters, shown in run metadata and failure reports."""

    name: str
    requests: int = 0
    failures: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    groups: int = 0
    streak: int = 0
    reported: bool = False
    last_failure: float = 0.0
    crashed: bool = False  # its server process died: no new groups, no probes

    @property
    def failing(self) -> bool:
        return self.streak >= FAILING_STREAK


class LimitedClient:
    """Wraps one endpoint: bounds requests in flight (shared semaphore) and counts them.

    With ``adaptive`` (a run's ``max_concurrent="auto"``) the endpoint's own
    :class:`~verifiers_lite.clients.adaptive.AdaptiveLimit` bounds them instead, learning how
    many it serves well from its answers.

    The semaphore is shared by every endpoint of a run, so ``max_concurrent`` bounds the
    run's model requests in flight, whatever the grouping. An endpoint with ``slots`` (requests
    it serves at once) also has its own bound, taken first so that a request waiting for a busy
    endpoint holds no place of the run's. Both waits are timed as waiting for a request slot
    (:mod:`verifiers_lite.clients.slots`), not as the request.
    """

    def __init__(
        self,
        inner: ModelClient,
        semaphore: asyncio.Semaphore | None,
        stats: EndpointStats,
        on_failing: Callable[[EndpointStats, BaseException], None] | None = None,
        slots: int | None = None,
        adaptive: AdaptiveLimit | None = None,
    ) -> None:
        self.inner = inner
        self.semaphore = semaphore
        self.adaptive = adaptive
        self.endpoint_slots = asyncio.Semaphore(slots) if slots else None
        self.stats = stats
        self.on_failing = on_failing

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def chat(
        self,
        model: str,
        messages: list[Message],
        sampling_args: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatResponse:
        held = [s for s in (self.endpoint_slots, self.semaphore) if s is not None]
        taken: list[asyncio.Semaphore] = []
        try:
            for s in held:
                await acquire(s)
                taken.append(s)
            if self.adaptive is None:
                return await self._call(model, messages, sampling_args, tools)
            async with self.adaptive.slot():
                return await self._call(model, messages, sampling_args, tools)
        finally:
            for s in taken:
                s.release()

    async def _call(self, model, messages, sampling_args, tools) -> ChatResponse:  # type: ignore[no-untyped-def]
        s = self.stats
        s.requests += 1
        s.in_flight += 1
        s.max_in_flight = max(s.max_in_flight, s.in_flight)
        try:
            response = await self.inner.chat(model, messages, sampling_args, tools)
        except Exception as exc:
            s.failures += 1
            s.streak += 1
            s.last_failure = time.monotonic()
            s.crashed = s.crashed or getattr(exc, "category", None) == "model_crashed"
            if s.streak >= FAILING_STREAK and not s.reported and self.on_failing is not None:
                s.reported = True
                self.on_failing(s, exc)
            raise
        finally:
            s.in_flight -= 1
        s.streak = 0
        s.reported = False
        return response


class EndpointRouter:
    """Assigns each group to the endpoint with the fewest groups assigned so far (even spread),
    passing over endpoints that keep failing while a healthy one is left (failover) and never
    choosing one whose server process has crashed while another is alive."""

    def __init__(
        self,
        clients: list[ModelClient],
        semaphore: asyncio.Semaphore | None,
        on_failing: Callable[[EndpointStats, BaseException], None] | None = None,
        adaptive: bool = False,
    ) -> None:
        """``adaptive``: each endpoint gets its own :class:`AdaptiveLimit` (``semaphore`` is
        then None: no fixed bound)."""
        self.endpoints = [
            LimitedClient(
                c,
                semaphore,
                EndpointStats(_endpoint_name(c, i)),
                on_failing,
                endpoint_slots(c),
                AdaptiveLimit() if adaptive else None,
            )
            for i, c in enumerate(clients)
        ]

    def in_flight_limit(self) -> int | None:
        """The adaptive limits' sum now (requests the run may have in flight), None when fixed."""
        limits = [e.adaptive.current for e in self.endpoints if e.adaptive is not None]
        return sum(limits) if limits else None

    def pick(self, least_busy: bool = False) -> LimitedClient:
        """The endpoint for a new group: the one with the fewest groups so far. With
        ``least_busy``, the endpoint for one request: the one with the fewest requests in flight
        (no group is counted). Either way among the healthy endpoints while there are any."""
        now = time.monotonic()
        alive = [e for e in self.endpoints if not e.stats.crashed] or self.endpoints
        usable = [
            e for e in alive if not e.stats.failing or now - e.stats.last_failure > FAILING_PROBE_S
        ]
        if least_busy:
            return min(usable or alive, key=lambda e: e.stats.in_flight)
        chosen = min(usable or alive, key=lambda e: e.stats.groups)
        chosen.stats.groups += 1
        return chosen

    def summary(self) -> list[dict[str, Any]]:
        return [
            {
                **{
                    k: getattr(e.stats, k)
                    for k in ("name", "requests", "failures", "groups", "max_in_flight")
                },
                **({"adaptive": e.adaptive.summary()} if e.adaptive is not None else {}),
            }
            for e in self.endpoints
        ]


def endpoint_slots(client: ModelClient) -> int | None:
    """How many requests the endpoint serves at once, when its client says (``ChatClient(slots=)``)."""
    slots = getattr(client, "slots", None)
    return slots if isinstance(slots, int) and not isinstance(slots, bool) and slots > 0 else None


def _endpoint_name(client: ModelClient, index: int) -> str:
    return str(getattr(client, "base_url", "") or f"endpoint-{index}")
