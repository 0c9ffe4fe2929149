"""Rollout servers deployed as Ray actors, behind one RolloutClientPool and a RemoteExecutor."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from verifiers_lite.clients import ChatClient
from verifiers_lite.core.registry import load_environment
from verifiers_lite.executors.remote import RemoteExecutor
from verifiers_lite.remote import RolloutClientPool
from verifiers_lite.server import deploy_rollout_servers
from verifiers_lite.testing.fake_server import FakeServerProcess

ray = pytest.importorskip(
    "ray", reason="Ray is an optional extra: pip install 'verifiers_lite[ray]'"
)

MODEL = "fake-arith"
ARGS = {"num_examples": 20}
SAMPLING = {"temperature": 0}  # the fake model answers deterministically at temperature 0


@pytest.fixture(scope="module")
def servers() -> Iterator[Any]:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    deployed = deploy_rollout_servers("arithmetic", ARGS, n=2, max_concurrent=8)
    yield deployed
    deployed.shutdown()
    ray.shutdown()


async def test_pool_over_ray_servers_equals_in_process(
    servers: Any, fake_server: FakeServerProcess
) -> None:
    assert len(servers) == 2 and all(u.startswith("http://127.0.0.1:") for u in servers)
    client = ChatClient(fake_server.base_url)
    local_env = load_environment("arithmetic", **ARGS)
    inputs = local_env.get_eval_inputs(12, 1, False, 0)
    local = await local_env.generate(
        inputs, client, MODEL, progress=False, independent_scoring=True, sampling_args=SAMPLING
    )
    remote_env = load_environment("arithmetic", **ARGS)
    async with RolloutClientPool(servers) as pool:
        remote = await remote_env.generate(
            inputs,
            client,
            MODEL,
            progress=False,
            independent_scoring=True,
            sampling_args=SAMPLING,
            executor=RemoteExecutor(pool),
        )
        health = await pool.health()
    await client.aclose()
    keys = ["example_id", "prompt", "completion", "answer", "reward", "metrics", "error"]

    def rows(out: Any) -> list[dict[str, Any]]:
        return sorted(({k: r[k] for k in keys} for r in out.rows), key=lambda r: r["example_id"])

    assert rows(local) == rows(remote)
    assert 0 < sum(r["reward"] for r in remote.rows) < len(remote.rows)
    assert min(pool.sent) > 0 and sum(pool.sent) == len(inputs)  # spread over both servers
    assert all(h["completed"] > 0 for h in health)
    assert len({h["process_id"] for h in health}) == 2  # two actor processes


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"pip install 'verifiers_lite\[ray\]'"):
        deploy_rollout_servers("arithmetic")


def test_pool_needs_a_server() -> None:
    with pytest.raises(ValueError):
        RolloutClientPool([])
