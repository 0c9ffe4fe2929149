"""1000 rollouts through one server: max_concurrent 32, admission backpressure, nothing lost."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

from tests.server.helpers import script
from verifiers_lite.remote import RolloutClient

N = 1000


async def test_thousand_rollouts_with_backpressure(spawn: Any) -> None:
    srv = spawn(max_concurrent=32, max_admitted=64, retry_after=0.05, wait=5)
    async with RolloutClient(srv.url, admission_timeout_sec=120) as client:

        async def one(i: int) -> Any:
            return await client.run_rollout(
                initial_messages=[{"role": "user", "content": f"q{i}"}],
                chat_completions_url="http://127.0.0.1:9/v1",
                rollout_id=f"load-{i}",
                label="42",
                metadata=script(run_sec=0.02, reward=i),
            )

        start = time.monotonic()
        results = await asyncio.gather(*(one(i) for i in range(N)))
        elapsed = time.monotonic() - start
        health = await client.health()
    assert Counter(r.status.value for r in results) == {"success": N}
    assert sorted(r.rollout_id for r in results) == sorted(f"load-{i}" for i in range(N))
    assert [int(r.sample.reward) for r in results] == list(range(N))  # each got its own result
    assert health["executed"] == N  # none run twice
    assert health["lifecycle"]["active_rollouts"] == 0
    starts = [e for e in srv.events() if e["event"] == "start"]
    assert len(starts) == N and len({e["id"] for e in starts}) == N
    print(f"{N} rollouts in {elapsed:.1f}s")
