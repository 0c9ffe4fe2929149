"""In-process executor: asyncio tasks in this process, one shared request semaphore."""

from __future__ import annotations

import asyncio
import math
from typing import Any

from verifiers_lite.clients.adaptive import AUTO, MAX_LIMIT
from verifiers_lite.clients.resolve import as_model_clients
from verifiers_lite.clients.routing import EndpointRouter, EndpointStats
from verifiers_lite.core.records import Row
from verifiers_lite.executors.base import RunContext, WorkUnit


class LocalExecutor:
    """Runs units with ``env.run_group`` / ``env.run_rollout`` on this event loop.

    Each unit is routed to one endpoint for all of its rollouts (group-sticky), endpoints get
    groups evenly, and one semaphore bounds the model requests in flight across all endpoints;
    with ``max_concurrent="auto"`` each endpoint's adaptive limit bounds its own instead.
    """

    in_process = True  # rollouts call the run's client on this event loop

    def __init__(self) -> None:
        self.ctx: RunContext | None = None
        self.router: EndpointRouter | None = None
        self.semaphore: asyncio.Semaphore | None = None
        self.limit = 0

    async def start(self, ctx: RunContext, group_size: int) -> int:
        self.ctx = ctx
        fixed = ctx.max_concurrent if isinstance(ctx.max_concurrent, int) else None
        semaphore = asyncio.Semaphore(fixed) if fixed else None
        self.semaphore, self.limit = semaphore, fixed or 0

        def report_failing(s: EndpointStats, exc: BaseException) -> None:
            ctx.on_log(f"endpoint {s.name} keeps failing ({s.streak} errors in a row; last: {exc})")

        clients = as_model_clients(ctx.client)
        adaptive = ctx.max_concurrent == AUTO
        self.router = EndpointRouter(clients, semaphore, report_failing, adaptive=adaptive)
        # Enough units in flight to keep max_concurrent requests busy, without one task per unit
        # (adaptive: as many as the endpoints' limits may grow to).
        most = len(clients) * MAX_LIMIT if adaptive else fixed or 1024
        return max(1, math.ceil(most / max(1, group_size)) + 1)

    def in_flight_limit(self) -> int | None:
        """The adaptive limits' sum now (the live display shows it); None when fixed."""
        return self.router.in_flight_limit() if self.router is not None else None

    async def run(self, unit: WorkUnit) -> list[Row]:
        assert self.ctx is not None and self.router is not None, "start() first"
        ctx, endpoint = self.ctx, self.router.pick()
        if ctx.independent:
            rows = [
                await ctx.env.run_rollout(
                    unit.inputs[0],
                    endpoint,
                    ctx.model,
                    ctx.sampling_args,
                    score=ctx.score,
                    rollout_index=unit.indices[0],
                )
            ]
        else:
            rows = await ctx.env.run_group(
                unit.inputs, endpoint, ctx.model, ctx.sampling_args, score=ctx.score
            )
        for r in rows:
            r["endpoint"] = endpoint.stats.name
        return rows

    def widen(self, limit: int) -> None:
        """Raise the bound on requests in flight mid-run (never lowers it)."""
        if self.semaphore is not None:
            for _ in range(limit - self.limit):
                self.semaphore.release()  # an asyncio.Semaphore may grow past its start value
            self.limit = max(self.limit, limit)

    def summary(self) -> dict[str, Any]:
        return {"executor": "local", "endpoints": self.router.summary() if self.router else []}

    async def close(self) -> None:
        return None
