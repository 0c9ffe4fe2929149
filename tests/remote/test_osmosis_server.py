"""Our ``RolloutClient`` against osmosis-ai's own rollout server (from the registry, run in
``.venv-osmosis``): admission, results graded right, a duplicate id (409), cancel, wait_idle
and auth (401)."""

from __future__ import annotations

import asyncio
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers.paths import REPO
from tests.server.helpers import SERVER_TESTS
from verifiers_lite.remote import RolloutClient
from verifiers_lite.remote.errors import RolloutProtocolError
from verifiers_lite.testing.fake_server import free_port
from verifiers_lite.testing.waiting import wait_until

OSMOSIS_PYTHON = REPO / ".venv-osmosis" / "bin" / "python"
KEY = "osmosis-server-key"
MODEL_URL = "http://127.0.0.1:9/v1"  # the workflow calls no model

pytestmark = pytest.mark.skipif(
    not OSMOSIS_PYTHON.exists(),
    reason=f"no {OSMOSIS_PYTHON.parent.parent} (osmosis-ai needs Python >= 3.12): "
    "run `bash .ci/install_osmosis.sh` (scripts/test.sh does)",
)


@pytest.fixture
def osmosis_server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = tmp_path / "osmosis-server.log"
    with open(log, "wb") as out:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(
            [str(OSMOSIS_PYTHON), str(SERVER_TESTS / "osmosis_server.py"), str(port), KEY],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(proc, url, log)
        yield url
    finally:
        proc.kill()
        proc.wait(10)


def _wait_healthy(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    def healthy() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"osmosis server exited: {log.read_text()}")
        try:
            return (
                httpx.get(
                    url + "/health", headers={"Authorization": f"Bearer {KEY}"}, timeout=1
                ).status_code
                == 200
            )
        except httpx.TransportError:
            return False

    wait_until(healthy, "the osmosis server answers /health", timeout=60)


def _question(a: int) -> dict:
    return {
        "initial_messages": [{"role": "user", "content": f"What is {a} + {a + 1}?"}],
        "label": str(2 * a + 1),
    }


async def test_our_client_against_osmosis_server(osmosis_server: str) -> None:
    async with RolloutClient(osmosis_server, api_key="wrong-key") as stranger:
        with pytest.raises(RolloutProtocolError) as refused:
            await stranger.health()
    assert refused.value.status_code == 401

    async with RolloutClient(osmosis_server, api_key=KEY) as client:
        results = await asyncio.gather(
            *(
                client.run_rollout(
                    chat_completions_url=MODEL_URL, rollout_id=f"o{a}", **_question(a)
                )
                for a in range(6)
            )
        )
        with pytest.raises(RolloutProtocolError) as duplicate:
            await client.run_rollout(
                chat_completions_url=MODEL_URL, rollout_id="o2", **_question(2)
            )
        handle = await client.run_rollout_async(
            chat_completions_url=MODEL_URL,
            rollout_id="hung",
            initial_messages=[{"role": "user", "content": "hang"}],
            label="0",
        )
        await handle.wait_for_running()
        disposition = await client.cancel_rollout("hung")
        cancelled = await handle
        idle = await client.wait_idle(timeout_sec=60, poll_interval_sec=0.1)

    for a, result in enumerate(results):
        assert result.status == "success" and result.sample is not None
        boxed = re.findall(r"\\boxed\{(-?\d+)\}", result.sample.messages[-1]["content"])  # type: ignore[attr-defined]
        assert result.sample.reward == (1.0 if boxed[-1] == str(2 * a + 1) else 0.0)
    assert [r.sample.reward for r in results] == [1.0, 0.0] * 3  # even A answered right
    assert duplicate.value.status_code == 409
    assert disposition == "cancelled_running" and cancelled.status == "cancelled"
    assert idle["lifecycle"]["active_rollouts"] == 0
