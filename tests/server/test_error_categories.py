"""One table between the core's error categories and the wire's, used by the server and its
client: checked against the table written out here by hand, and through a real ``vf-lite serve``."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import verifiers_lite as vf
from tests.server import srv_cleanup_env
from tests.server.helpers import ServerProc, start_serve
from verifiers_lite.core.errors import ERROR_CATEGORIES
from verifiers_lite.remote import RolloutClient
from verifiers_lite.server.protocol import (
    CORE_CATEGORY,
    WIRE_CATEGORY,
    WireErrorCategory,
    core_category,
    wire_category,
)
from verifiers_lite.testing.fake_server import FakeServerProcess
from verifiers_lite.testing.waiting import wait_until

KEY = "k3y"
MODEL = "fake-arith"
SERVER_MODEL_ATTEMPTS = 4  # the server's ChatClient: RetryPolicy() tries a 503 four times

# The wire names are the external rollout protocol's (osmosis-ai): they must not change.
WIRE_NAMES = {
    "timeout",
    "lease_expired",
    "validation_error",
    "http_error",
    "agent_error",
    "internal_error",
}
CORE_TO_WIRE = {
    "model_http_error": "http_error",
    "model_rate_limited": "http_error",
    "model_timeout": "timeout",
    "model_connection": "http_error",
    "model_crashed": "http_error",
    "model_bad_response": "http_error",
    "env_error": "agent_error",
    "rollout_timeout": "timeout",
    "rubric_error": "agent_error",
    "cancelled": "internal_error",
    "remote_error": "internal_error",
    "prompt_too_long": "validation_error",
}
WIRE_TO_CORE = {
    "timeout": "rollout_timeout",
    "lease_expired": "remote_error",
    "validation_error": "remote_error",
    "http_error": "model_http_error",
    "agent_error": "env_error",
    "internal_error": "remote_error",
}


def test_every_core_category_has_its_wire_category_and_back() -> None:
    assert {c.value for c in WireErrorCategory} == WIRE_NAMES
    assert set(ERROR_CATEGORIES) == set(CORE_TO_WIRE)
    assert {k: v.value for k, v in WIRE_CATEGORY.items()} == CORE_TO_WIRE
    assert {k.value: v for k, v in CORE_CATEGORY.items()} == WIRE_TO_CORE
    for core, wire in CORE_TO_WIRE.items():
        assert wire_category(core) == wire
        # The server heads its message with the core category: the client reads it back.
        assert core_category(wire, f"{core}: ModelAPIError: something") == core
    for wire, core in WIRE_TO_CORE.items():
        assert wire_category(wire) == wire  # a wire name stays itself
        assert core_category(wire, "the server's own words") == core
    # A head that names a core category of another wire category is not believed.
    assert core_category("agent_error", "model_timeout: ...") == "env_error"
    assert wire_category("my_env_category") == "agent_error"
    assert core_category("not_a_wire_name", "x") == core_category(None, "x") == "remote_error"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProc]:
    tmp = tmp_path_factory.mktemp("categories")
    srv = start_serve(tmp, "srv_cleanup_env", "--env-args", json.dumps({"log": ""}), api_key=KEY)
    yield srv
    srv.stop()


async def test_a_model_failure_on_the_server_crosses_the_wire_as_the_table_says(
    fake_server: FakeServerProcess, served: ServerProc
) -> None:
    fake_server.configure(faults=[{"status": 503}] * SERVER_MODEL_ATTEMPTS)
    async with RolloutClient(served.url, api_key=KEY) as rc:
        result = await rc.run_rollout(
            initial_messages=[{"role": "user", "content": "What is 2 + 5?"}],
            chat_completions_url=fake_server.base_url,
            rollout_id=uuid.uuid4().hex,
            grade=False,
            metadata={"model": MODEL},
        )
    assert fake_server.stats()["by_status"] == {"503": SERVER_MODEL_ATTEMPTS}
    assert (result.status, result.err_category) == ("failure", CORE_TO_WIRE["model_http_error"])
    assert (result.err_message or "").startswith("model_http_error: ")


def test_the_remote_executor_records_the_core_category(
    fake_server: FakeServerProcess, served: ServerProc
) -> None:
    fake_server.configure(faults=[{"status": 503}] * SERVER_MODEL_ATTEMPTS)
    env = srv_cleanup_env.load_environment(num_examples=1)
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        MODEL,
        progress=False,
        executor=vf.executors.RemoteExecutor(served.url, api_key=KEY),
    )
    (row,) = out.rows
    assert row["error"]["category"] == "model_http_error" and row["reward"] is None


def test_a_model_timeout_on_the_server_arrives_as_model_timeout(
    fake_server: FakeServerProcess, served: ServerProc
) -> None:
    """Every model request stalls past the rollout's per-request timeout (a sampling arg the
    server's client honours): wire ``timeout`` naming ``model_timeout``, row ``model_timeout``."""
    stalls = [{"stall": 3}] * SERVER_MODEL_ATTEMPTS
    args = {"timeout": 0.5}
    fake_server.configure(faults=stalls)

    async def raw() -> Any:
        async with RolloutClient(served.url, api_key=KEY) as rc:
            return await rc.run_rollout(
                initial_messages=[{"role": "user", "content": "What is 2 + 5?"}],
                chat_completions_url=fake_server.base_url,
                rollout_id=uuid.uuid4().hex,
                grade=False,
                metadata={"model": MODEL, "sampling_args": args},
            )

    result = asyncio.run(raw())
    assert (result.status, result.err_category) == ("failure", CORE_TO_WIRE["model_timeout"])
    assert (result.err_message or "").startswith("model_timeout: ")
    fake_server.configure(faults=stalls)
    env = srv_cleanup_env.load_environment(num_examples=1)
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        MODEL,
        progress=False,
        sampling_args=args,
        executor=vf.executors.RemoteExecutor(served.url, api_key=KEY),
    )
    (row,) = out.rows
    assert row["error"]["category"] == "model_timeout" and row["reward"] is None
    # The stalled requests end before the next test reads the fake server's counters.
    wait_until(lambda: fake_server.stats()["in_flight"] == 0, "the stalled model requests to end")


async def test_a_server_failure_without_a_sample_is_recorded_by_the_table(
    fake_server: FakeServerProcess, served: ServerProc
) -> None:
    """No model named and the endpoint serves several: the server refuses the rollout
    (validation_error, no sample); the client records the table's core category."""
    async with RolloutClient(served.url, api_key=KEY) as rc:
        state = await rc.run_state(
            {"prompt": [{"role": "user", "content": "What is 1 + 1?"}], "example_id": 0},
            chat_completions_url=fake_server.base_url,
            llm_api_key=None,
            model="",
            sampling_args=None,
        )
    assert state["error"]["category"] == WIRE_TO_CORE["validation_error"]
    assert state["error"]["message"].startswith("validation_error: no model")
    assert state["stop_reason"] == "error"
