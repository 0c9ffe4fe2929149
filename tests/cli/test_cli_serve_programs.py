"""A program environment behind ``vf-lite serve`` (the rollout server) and on a RayExecutor: the
bundled calculator agent's program runs where the rollout runs, its calls reach the fake
model server, and the rollout comes back scored."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import verifiers_lite as vf
from tests.server.helpers import start_serve
from verifiers_lite.remote import RolloutClient
from verifiers_lite.testing.fake_server import FakeServerProcess


@pytest.fixture
def fake_tool() -> Iterator[FakeServerProcess]:
    with FakeServerProcess(models=["fake-tool"]) as f:  # the request's endpoint names one model
        yield f


async def test_a_program_environment_serves_rollouts(
    fake_tool: FakeServerProcess, tmp_path: Path
) -> None:
    srv = start_serve(tmp_path, "calculator_agent")
    try:
        async with RolloutClient(srv.url) as client:
            result = await client.run_rollout(
                chat_completions_url=fake_tool.base_url,
                rollout_id="program",
                initial_messages=[{"role": "user", "content": "What is 3 + 4?"}],
                label="7",
            )
    finally:
        srv.stop()
    assert result.status == "success", result.err_message
    assert result.sample is not None
    # fake-tool calls the calculator, then answers with its result: the program's two calls.
    assert fake_tool.stats()["requests"] == 2
    assert re.search(r"\b7\b", str(result.sample.completion[-1]["content"]))
    assert result.sample.reward == 1.0


def test_a_program_environment_runs_on_ray(fake_tool: FakeServerProcess) -> None:
    ray: Any = pytest.importorskip("ray", reason="Ray is an optional extra")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    client = vf.ChatClient(fake_tool.base_url)
    env = vf.load_environment("calculator_agent", num_examples=3)
    local = env.evaluate_sync(client, "fake-tool", progress=False)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = env.evaluate_sync(
            client, "fake-tool", progress=False, executor=vf.executors.RayExecutor(num_workers=2)
        )
    finally:
        ray.shutdown()
    assert [r["error"] for r in remote.rows] == [None] * 3
    assert {r["worker"] for r in remote.rows} == {0, 1}

    def key(rows: list[Any]) -> list[Any]:
        return sorted(
            (r["example_id"], r["reward"], r["env_state"]["program"]["answer"], r["turns"])
            for r in rows
        )

    assert key(remote.rows) == key(local.rows)
    assert all(r["reward"] == 1.0 for r in remote.rows)
