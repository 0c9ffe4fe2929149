"""LocalBackend end to end: an Environment behind the server against the fake model."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers.paths import REPO
from verifiers_lite._util.sync import run_sync
from verifiers_lite.clients import ChatClient
from verifiers_lite.core.registry import load_environment
from verifiers_lite.executors.remote import RemoteExecutor
from verifiers_lite.remote import RolloutClient
from verifiers_lite.server import LocalBackend
from verifiers_lite.server.lifecycle import Lifecycle, ShutdownTimeouts
from verifiers_lite.server.protocol import RolloutRequest
from verifiers_lite.server.service import RolloutService
from verifiers_lite.testing.fake_server import FakeServerProcess, free_port
from verifiers_lite.testing.waiting import wait_until, wait_until_async

MODEL = "fake-arith"
SAMPLING = {"temperature": 0}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeServerProcess]:
    with FakeServerProcess() as f:
        yield f


@pytest.fixture(scope="module")
def served(fake: FakeServerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m verifiers_lite.cli.serve arithmetic`` (what ``vf-lite serve`` runs)."""
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {**os.environ, "ROLLOUT_KEY": "k3y", "PYTHONPATH": str(REPO)}
    with open(log, "wb") as out:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "verifiers_lite.cli.serve",
                "arithmetic",
                "--port",
                str(port),
                "--api-key-env",
                "ROLLOUT_KEY",
                "--max-concurrent",
                "8",
                "--env-args",
                '{"num_examples": 20}',
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=REPO,
        )
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(log.read_text())
        try:
            return (
                httpx.get(url + "/health", headers={"Authorization": "Bearer k3y"}).status_code
                == 200
            )
        except httpx.TransportError:
            return False

    wait_until(healthy, "vf-lite serve answers /health", timeout=30)
    yield url
    proc.terminate()
    proc.wait(30)


def test_remote_executor_rows_equal_in_process(fake: FakeServerProcess, served: str) -> None:
    client = ChatClient(fake.base_url)
    kw: dict[str, Any] = dict(rollouts_per_example=2, progress=False, sampling_args=SAMPLING)
    local = load_environment("arithmetic", num_examples=20).evaluate_sync(client, MODEL, 8, **kw)
    rc = RolloutClient(served, api_key="k3y")
    remote = load_environment("arithmetic", num_examples=20).evaluate_sync(
        client, MODEL, 8, executor=RemoteExecutor(rc), **kw
    )
    health = run_sync(rc.health())
    run_sync(rc.aclose())
    keys = [
        "example_id",
        "rollout_index",
        "prompt",
        "completion",
        "answer",
        "reward",
        "metrics",
        "advantage",
        "task",
        "info",
        "error",
    ]
    assert [{k: r[k] for k in keys} for r in local.rows] == [
        {k: r[k] for k in keys} for r in remote.rows
    ]
    assert 0 < sum(r["reward"] for r in remote.rows) < len(remote.rows)  # real, varied rewards
    assert health["backend"] == "local" and health["environment"] == "SingleTurnEnv"
    assert health["completed"] >= 16


async def test_failed_model_call_comes_back_as_an_unscored_state_with_its_error(
    served: str,
) -> None:
    async with RolloutClient(served, api_key="k3y") as rc:
        state = await rc.run_state(
            {
                "prompt": [{"role": "user", "content": "What is 1 + 1?"}],
                "answer": "2",
                "example_id": 3,
                "info": {},
                "task": "arithmetic",
            },
            chat_completions_url="http://127.0.0.1:9/v1",
            llm_api_key=None,
            model=MODEL,
            sampling_args=None,
        )
    assert state["reward"] is None and state["error"]["category"] == "model_connection"
    assert state["example_id"] == 3 and state["stop_reason"] == "error"


def _backend_and_service(env: Any, **kw: Any) -> tuple[LocalBackend, RolloutService]:
    backend = LocalBackend(env, **kw)
    return backend, RolloutService(backend, polling_lease_timeout_sec=60, result_retention_sec=60)


async def test_grading_needs_a_grader_and_a_label_or_metadata(fake: FakeServerProcess) -> None:
    import verifiers_lite as vf

    bare = vf.SingleTurnEnv(dataset=[{"question": "1+1", "answer": "2"}])
    _, service = _backend_and_service(bare, model=MODEL)
    req = dict(
        initial_messages=[{"role": "user", "content": "1 + 1"}], chat_completions_url=fake.base_url
    )
    no_grader = service.admit(RolloutRequest(rollout_id="g1", label="2", **req))
    await no_grader.task
    assert no_grader.result.err_category == "validation_error"
    assert "no grader" in no_grader.result.err_message
    ungraded = service.admit(RolloutRequest(rollout_id="g2", grade=False, **req))
    await ungraded.task
    assert ungraded.result.status == "success"
    env = load_environment("arithmetic", num_examples=5)
    _, service = _backend_and_service(env, model=MODEL)
    no_label = service.admit(RolloutRequest(rollout_id="g3", **req))
    await no_label.task
    assert "neither a label nor metadata" in no_label.result.err_message


async def test_artifacts_persisted_before_inactive_and_cancel(
    fake: FakeServerProcess, tmp_path: Path
) -> None:
    env = load_environment("arithmetic", num_examples=5)
    backend, service = _backend_and_service(
        env, model=MODEL, artifacts_dir=tmp_path, max_concurrent=1
    )
    req = dict(
        initial_messages=[{"role": "user", "content": "2 + 2"}], chat_completions_url=fake.base_url
    )
    rec = service.admit(RolloutRequest(rollout_id="art", label="4", **req))
    queued = service.admit(RolloutRequest(rollout_id="q", label="4", **req))
    assert await service.request_cancel(queued) == "cancelled_queued"
    await rec.task
    assert not rec.active
    saved = json.loads((tmp_path / "art.json").read_text())
    assert saved["reward"] == rec.result.sample.reward
    await wait_until_async(lambda: queued.result is not None, "the queued rollout's result")
    assert queued.result.status == "cancelled"
    fake.configure(latency_ms=5000)
    try:
        slow = service.admit(RolloutRequest(rollout_id="slow", label="4", **req))
        await wait_until_async(
            lambda: fake.stats()["in_flight"] == 1, "the slow rollout's model call"
        )
        assert await service.request_cancel(slow) == "cancelled_running"
        await asyncio.wait_for(slow.task, 3)
        assert slow.result.status == "cancelled"
        timed = service.admit(
            RolloutRequest(rollout_id="t", label="4", agent_timeout_sec=0.3, **req)
        )
        await asyncio.wait_for(timed.task, 3)
        assert timed.result.err_category == "timeout"
    finally:
        fake.configure(latency_ms=0)
    lifecycle = Lifecycle(service, ShutdownTimeouts(0.1, 0.1, 0.1))
    await lifecycle.shutdown()
    assert backend._clients == {}
