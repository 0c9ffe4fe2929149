"""The client on the batched routes: what one event-loop turn submits goes out as one request
(counted at a proxy in front of a real server), rows equal an in-process run, a server without
the batched routes is remembered and served by the single routes, and the single path's retry
schedules hold."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

import verifiers_lite as vf
from tests.server import srv_cleanup_env
from tests.server.helpers import ServerProc, script, start_serve
from tests.server.proxy import FaultProxy
from verifiers_lite.remote import RolloutClient
from verifiers_lite.server.protocol import RolloutAccepted
from verifiers_lite.testing.clock import ManualClock
from verifiers_lite.testing.fake_server import FakeServerProcess

MODEL = "fake-arith"
N, R = 6, 3
COMPARED = (
    "example_id",
    "rollout_index",
    "prompt",
    "completion",
    "answer",
    "info",
    "task",
    "reward",
    "metrics",
    "advantage",
    "error",
    "stop_reason",
    "turns",
)
MSGS = [{"role": "user", "content": "6*7?"}]
URL = "http://127.0.0.1:9/v1"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProc]:
    srv = start_serve(
        tmp_path_factory.mktemp("batched"), "srv_cleanup_env", "--max-concurrent", "32"
    )
    yield srv
    srv.stop()


def _port(srv: ServerProc) -> int:
    return int(srv.url.rsplit(":", 1)[1])


def _key(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted(tuple(json.dumps(r[k], sort_keys=True) for k in COMPARED) for r in rows)


def _requests(proxy: FaultProxy, path: str) -> int:
    return sum(s.split()[1].split("?")[0] == path for s in proxy.seen)


async def _run_remote(fake: FakeServerProcess, url: str, tmp: Path) -> Any:
    env = srv_cleanup_env.load_environment(log=str(tmp / "driver.jsonl"), num_examples=N)
    return await env.evaluate(
        vf.ChatClient(fake.base_url),
        MODEL,
        rollouts_per_example=R,
        progress=False,
        executor=vf.executors.RemoteExecutor(url),
    )


async def test_rollouts_of_one_turn_are_admitted_together_and_their_results_streamed_back(
    fake_server: FakeServerProcess, served: ServerProc, tmp_path: Path
) -> None:
    local = srv_cleanup_env.load_environment(
        log=str(tmp_path / "local.jsonl"), num_examples=N
    ).evaluate_sync(
        vf.ChatClient(fake_server.base_url), MODEL, rollouts_per_example=R, progress=False
    )
    proxy = await FaultProxy(_port(served), match="never").start()  # counts, forwards everything
    try:
        remote = await _run_remote(fake_server, proxy.url, tmp_path)
    finally:
        await proxy.close()
    assert _key(remote.rows) == _key(local.rows)
    # Every group starts in the first turn: all N * R rollouts in one admission request, whose
    # response brings every result back: no poll at all.
    assert _requests(proxy, "/rollouts") == 1
    assert _requests(proxy, "/rollouts/results") == 0
    assert (
        sum("/rollout/" in s or s.endswith(" /rollout") for s in proxy.seen) == 0
    )  # no single route


async def test_a_server_without_the_batched_routes_is_remembered_and_gets_single_requests(
    fake_server: FakeServerProcess, served: ServerProc, tmp_path: Path
) -> None:
    local = srv_cleanup_env.load_environment(
        log=str(tmp_path / "local.jsonl"), num_examples=N
    ).evaluate_sync(
        vf.ChatClient(fake_server.base_url), MODEL, rollouts_per_example=R, progress=False
    )
    proxy = await FaultProxy(_port(served), match="/rollouts").start()
    proxy.always = "404"  # an older server: no POST /rollouts, no POST /rollouts/results
    try:
        async with RolloutClient(proxy.url) as client:
            remote = await _run_remote(fake_server, client.url, tmp_path)
            # ...and a client that learnt it sends single requests from then on.
            answers = await client.admit_many(
                [
                    {
                        "rollout_id": uuid.uuid4().hex,
                        "initial_messages": MSGS,
                        "chat_completions_url": URL,
                        "grade": False,
                    }
                ]
            )
            assert isinstance(answers[0], RolloutAccepted)
            (result,) = await client.wait_many([answers[0]])
            assert (
                not isinstance(result, Exception) and result.status == "failure"
            )  # unreachable model
    finally:
        await proxy.close()
    assert _key(remote.rows) == _key(local.rows)
    assert [s for s in proxy.seen if "/rollouts" in s] == ["404 /rollouts"] * 2  # once per client
    assert _requests(proxy, "/rollout") == N * R + 1


@pytest.fixture
async def scripted_proxy(server: ServerProc) -> AsyncIterator[FaultProxy]:
    proxy = await FaultProxy(_port(server), match="/rollouts/results").start()
    yield proxy
    await proxy.close()


async def test_admit_many_then_wait_many_keep_the_single_paths_schedules_and_errors(
    scripted_proxy: FaultProxy, fake_clock: ManualClock
) -> None:
    ids = [uuid.uuid4().hex for _ in range(3)]
    bodies = [
        {
            "rollout_id": rid,
            "initial_messages": MSGS,
            "chat_completions_url": URL,
            "label": "42",
            "metadata": script(reward=0.5 * i),
        }
        for i, rid in enumerate(ids)
    ]
    bodies.append({**bodies[0]})  # the same id again: refused as POST /rollout refuses it
    bodies.append(
        {"rollout_id": "bad", "initial_messages": "not a list", "chat_completions_url": URL}
    )
    scripted_proxy.faults.extend(["502", "503", "drop"])
    async with RolloutClient(scripted_proxy.url, clock=fake_clock) as client:
        answers = await client.admit_many(bodies)
        assert [type(a).__name__ for a in answers] == ["RolloutAccepted"] * 3 + [
            "RolloutProtocolError"
        ] * 2
        assert [getattr(a, "status_code", None) for a in answers[3:]] == [409, 422]
        accepted = [a for a in answers if isinstance(a, RolloutAccepted)]
        results = await client.wait_many(accepted)
    assert [r.status for r in results if not isinstance(r, Exception)] == ["success"] * 3
    assert [r.sample.reward for r in results if not isinstance(r, Exception) and r.sample] == [
        0.0,
        0.5,
        1.0,
    ]
    # Each rollout went through the gateway schedule (0.25, 0.5) and the network one (0.1), as a
    # single poll does; the three retried together, one request per step.
    assert sorted(fake_clock.sleeps) == sorted([0.25, 0.5, 0.1] * 3)
    polls = [s.split()[0] for s in scripted_proxy.seen if s.endswith(" /rollouts/results")]
    assert polls[:4] == ["502", "503", "drop", "pass"]
    assert _requests(scripted_proxy, "/rollouts") == 1


async def test_admit_many_refuses_a_request_without_an_id_before_sending(
    fake_clock: ManualClock,
) -> None:
    async with RolloutClient("http://127.0.0.1:9", clock=fake_clock) as client:
        with pytest.raises(ValueError, match="request 1 has no string 'rollout_id'"):
            await client.admit_many([{"rollout_id": "a"}, {"initial_messages": MSGS}])


async def test_a_turn_over_a_mib_of_bodies_is_split_over_several_requests(
    server: ServerProc,
) -> None:
    big = "x" * 300_000  # five of these are over the MiB one admission request carries
    bodies = [
        {
            "rollout_id": uuid.uuid4().hex,
            "initial_messages": [{"role": "user", "content": big}],
            "chat_completions_url": URL,
            "grade": False,
        }
        for _ in range(5)
    ]
    proxy = await FaultProxy(_port(server), match="never").start()
    try:
        async with RolloutClient(proxy.url) as client:
            answers = await client.admit_many(bodies)
            results = await client.wait_many([a for a in answers if isinstance(a, RolloutAccepted)])
    finally:
        await proxy.close()
    assert [a.rollout_id for a in answers if isinstance(a, RolloutAccepted)] == [
        b["rollout_id"] for b in bodies
    ]
    assert [getattr(r, "status", r) for r in results] == ["success"] * 5
    assert _requests(proxy, "/rollouts") == 2  # 3 bodies (900 kB), then 2
