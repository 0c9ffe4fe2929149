"""RemoteExecutor: rollouts run on rollout servers; the driver scores groups and cleans up.

async with vf.remote.RolloutClientPool(["http://host-a:8100", "http://host-b:8100"]) as pool:
    out = await env.evaluate(client, model, executor=vf.executors.RemoteExecutor(pool))
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Sequence
from typing import Any

from verifiers_lite.core.errors import categorize
from verifiers_lite.core.progress import track_rollout
from verifiers_lite.core.records import ErrorRecord, RolloutInput, Row, State
from verifiers_lite.executors.base import RunContext, WorkUnit, endpoint_specs, fixed_limit
from verifiers_lite.remote.client import RolloutClient
from verifiers_lite.remote.pool import RolloutClientPool
from verifiers_lite.remote.state_runs import failure_state


class RemoteExecutor:
    """Runs units on rollout servers (``vf-lite serve``, ``vf.server.deploy_rollout_servers``).

    Each rollout goes to the least-loaded server, which runs it against the run's model endpoint
    and returns its State unscored; the driver scores each group with the environment's rubric,
    then runs the rubric's cleanup once per rollout, so rows, resume, progress and callbacks are
    those of an in-process run. Every rollout of a group uses one model endpoint (groups spread
    evenly over the endpoints); ``max_concurrent`` bounds rollouts in flight over all servers.
    Rollouts that start in the same event-loop turn reach each server as one batched admission
    (no timer: nothing waits to fill a batch), whose response brings each result as it ends.

    ``servers``: a :class:`RolloutClientPool` (yours: it stays open), a :class:`RolloutClient`,
    or server URLs (a pool is made with ``api_key``/``admission_timeout_sec`` and closed at the
    end of each run). A server that cannot be reached fails its rollouts as ``remote_error``
    rows; an interrupted run leaves its rollouts to the servers' polling lease, which cancels them.
    """

    in_process = False  # rollouts run on rollout servers

    def __init__(
        self,
        servers: RolloutClientPool | RolloutClient | str | Sequence[str | RolloutClient],
        *,
        api_key: str | None = None,
        admission_timeout_sec: float | None = None,
    ) -> None:
        self._owned = not isinstance(servers, RolloutClientPool)
        if isinstance(servers, RolloutClientPool):
            self.pool = servers
        else:
            items = [servers] if isinstance(servers, (str, RolloutClient)) else list(servers)
            bad = [s for s in items if not isinstance(s, (str, RolloutClient))]
            if bad:
                raise TypeError(
                    f"RemoteExecutor takes server URLs, RolloutClients or a RolloutClientPool; got {bad[0]!r}"
                )
            self.pool = RolloutClientPool(
                items, api_key=api_key, admission_timeout_sec=admission_timeout_sec
            )
        self.ctx: RunContext | None = None
        self.endpoints: list[tuple[str, str | None]] = []
        self.groups: list[int] = []
        self._sampling: dict[str, Any] = {}
        self._semaphore: asyncio.Semaphore | None = None
        self._sent_before: list[int] = []

    async def start(self, ctx: RunContext, group_size: int) -> int:
        self.ctx = ctx
        limit = fixed_limit(ctx, "RemoteExecutor")
        self.endpoints = endpoint_specs(ctx.client, "RemoteExecutor")
        self.groups = [0] * len(self.endpoints)
        self._sent_before = list(self.pool.sent)
        # The server's environment gets the run's sampling on top of this environment's own.
        self._sampling = {**ctx.env.sampling_args, **(ctx.sampling_args or {})}
        self._semaphore = asyncio.Semaphore(limit) if limit else None
        return max(1, math.ceil((limit or 1024) / max(1, group_size)) + 1)

    async def run(self, unit: WorkUnit) -> list[Row]:
        assert self.ctx is not None, "start() first"
        started = time.perf_counter()
        # Group-sticky: the whole group on the endpoint with the fewest groups so far.
        e = min(range(len(self.endpoints)), key=self.groups.__getitem__)
        self.groups[e] += 1
        url, key = self.endpoints[e]
        # live counts, as in-process
        rollouts = [
            track_rollout(self._one(inp, url, key), (unit.example_id, index))
            for inp, index in zip(unit.inputs, unit.indices, strict=True)
        ]
        # One rollout (independent scoring) is awaited here: a task of its own costs two turns.
        states = [await rollouts[0]] if len(rollouts) == 1 else await asyncio.gather(*rollouts)
        for state, index in zip(states, unit.indices, strict=True):
            state["rollout_index"] = index
        rows = await self.ctx.env.finish_group(list(states), score=self.ctx.score, started=started)
        for r in rows:
            r["endpoint"] = url
        return rows

    async def _one(self, inp: RolloutInput, url: str, key: str | None) -> State:
        assert self.ctx is not None
        try:
            if self._semaphore is None:
                return await self._send(inp, url, key)
            async with self._semaphore:
                return await self._send(inp, url, key)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # unreachable server, refused admission, bad answer: this row only
            error: ErrorRecord = {
                "category": "remote_error",
                "message": f"rollout server: {categorize(exc)['message']}",
            }
            return failure_state(inp, self.ctx.model, error)

    async def _send(self, inp: RolloutInput, url: str, key: str | None) -> State:
        assert self.ctx is not None
        return await self.pool.run_state(
            inp,
            chat_completions_url=url,
            llm_api_key=key,
            model=self.ctx.model,
            sampling_args=self._sampling,
        )

    def summary(self) -> dict[str, Any]:
        return {
            "executor": "remote",
            "servers": [
                {"url": c.url, "rollouts": n - before}
                for c, n, before in zip(
                    self.pool.clients,
                    self.pool.sent,
                    self._sent_before or [0] * len(self.pool.sent),
                    strict=True,
                )
            ],
            "endpoints": [
                {"name": u, "groups": g}
                for (u, _), g in zip(self.endpoints, self.groups, strict=True)
            ],
        }

    async def close(self) -> None:
        """End of a run: a pool made here closes its connections (they reopen on the next run)."""
        if self._owned:
            await self.pool.aclose()
