"""``RolloutClientPool``: many rollout servers behind one client (least-loaded forwarding)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

from verifiers_lite.core.records import RolloutInput, State
from verifiers_lite.server.protocol import RolloutResultResponse

from .client import RolloutClient


class RolloutClientPool:
    """Forwards each rollout to the server with the fewest rollouts in flight from this pool.

    Give it URLs (a :class:`RolloutClient` is built for each, with ``api_key`` and
    ``admission_timeout_sec``) or ready clients. ``vf.executors.RemoteExecutor(pool)`` runs a whole
    ``generate``/``evaluate`` on it. Rollouts are independent on the server (the driver scores
    groups), so the rollouts of one group need not share a server.
    """

    def __init__(
        self,
        servers: Iterable[str | RolloutClient],
        *,
        api_key: str | None = None,
        admission_timeout_sec: float | None = None,
    ) -> None:
        self.clients: list[RolloutClient] = [
            s
            if isinstance(s, RolloutClient)
            else RolloutClient(s, api_key=api_key, admission_timeout_sec=admission_timeout_sec)
            for s in servers
        ]
        if not self.clients:
            raise ValueError("RolloutClientPool needs at least one server")
        self.in_flight = [0] * len(self.clients)
        self.sent = [0] * len(self.clients)
        self._turn = itertools.count()

    def _pick(self) -> int:
        # Least in flight; ties broken round-robin so an idle pool still spreads work.
        start = next(self._turn) % len(self.clients)
        order = [(start + k) % len(self.clients) for k in range(len(self.clients))]
        return min(order, key=lambda i: self.in_flight[i])

    async def _on(self, method: str, *args: Any, **kwargs: Any) -> Any:
        i = self._pick()
        self.in_flight[i] += 1
        self.sent[i] += 1
        try:
            return await getattr(self.clients[i], method)(*args, **kwargs)
        finally:
            self.in_flight[i] -= 1

    async def run_state(self, input: RolloutInput, **kwargs: Any) -> State:
        """:meth:`RolloutClient.run_state` on the least-loaded server."""
        state: State = await self._on("run_state", input, **kwargs)
        return state

    async def run_rollout(self, *args: Any, **kwargs: Any) -> RolloutResultResponse:
        """:meth:`RolloutClient.run_rollout` on the least-loaded server."""
        result: RolloutResultResponse = await self._on("run_rollout", *args, **kwargs)
        return result

    async def health(self) -> list[dict[str, Any]]:
        """Every server's ``/health`` payload, in pool order."""
        return [await c.health() for c in self.clients]

    async def aclose(self) -> None:
        """Close every client's HTTP connections."""
        for c in self.clients:
            await c.aclose()

    async def __aenter__(self) -> RolloutClientPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
