"""RemoteExecutor against a real ``vf-lite serve`` process: rows, scoring order, cleanup, resume.

The server serves ``srv_cleanup_env`` whose rubric's cleanup appends to a log, so each test can
see in which process cleanup ran, how often, and whether the rollout was scored by then.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import verifiers_lite as vf
from tests.server import srv_cleanup_env
from tests.server.helpers import ServerProc, start_serve
from verifiers_lite.remote import RolloutClient
from verifiers_lite.results.store import read_rows
from verifiers_lite.server import LocalBackend
from verifiers_lite.server.backend import RolloutContext
from verifiers_lite.server.protocol import RolloutRequest
from verifiers_lite.testing.fake_server import FakeServerProcess, free_port

MODEL = "fake-arith"
KEY = "k3y"
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


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProc, Path]]:
    tmp = tmp_path_factory.mktemp("remote")
    log = tmp / "server-cleanup.jsonl"
    srv = start_serve(
        tmp,
        "srv_cleanup_env",
        "--env-args",
        json.dumps({"log": str(log)}),
        "--max-concurrent",
        "16",
        api_key=KEY,
    )
    yield srv, log
    srv.stop()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def _two_endpoints(fake: FakeServerProcess) -> list[vf.ChatClient]:
    # Two endpoint URLs served by one fake model (it answers on any .../chat/completions path).
    return [vf.ChatClient(f"{fake.url}/a/v1"), vf.ChatClient(f"{fake.url}/b/v1")]


@pytest.mark.parametrize("independent", [False, True])
def test_remote_run_equals_in_process_and_cleans_up_once_after_scoring(
    fake_server: FakeServerProcess,
    served: tuple[ServerProc, Path],
    tmp_path: Path,
    independent: bool,
) -> None:
    srv, server_log = served
    server_log.unlink(missing_ok=True)
    clients = _two_endpoints(fake_server)
    kw: dict[str, Any] = dict(
        rollouts_per_example=R, progress=False, independent_scoring=independent
    )
    local = srv_cleanup_env.load_environment(
        log=str(tmp_path / "local.jsonl"), num_examples=N
    ).evaluate_sync(clients, MODEL, **kw)
    driver_log = tmp_path / "driver.jsonl"
    in_flight: list[int] = []

    class Live:  # what a live display sees while the run goes
        def on_update(self, stats: Any) -> None:
            in_flight.append(stats.in_flight)

    remote = srv_cleanup_env.load_environment(log=str(driver_log), num_examples=N).evaluate_sync(
        clients,
        MODEL,
        executor=vf.executors.RemoteExecutor(srv.url, api_key=KEY),
        callbacks=[Live()],
        max_concurrent=4,
        **kw,
    )
    assert max(in_flight) > 0 and in_flight[-1] == 0  # rollouts counted as they start and end

    def key(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return sorted(tuple(json.dumps(r[k], sort_keys=True) for k in COMPARED) for r in rows)

    assert key(remote.rows) == key(local.rows)
    # Scored on the driver as written in the environment (hand-computed from each row).
    for r in remote.rows:
        correct = float(f"\\boxed{{{r['answer']}}}" in r["completion"][-1]["content"])
        assert r["reward"] == pytest.approx(correct + 0.1 * r["rollout_index"] + r["info"]["bonus"])
    by_example: dict[int, list[dict[str, Any]]] = {}
    for r in remote.rows:
        by_example.setdefault(r["example_id"], []).append(r)
    for rows in by_example.values():
        for r in rows:
            peers = [r] if independent else rows
            assert r["advantage"] == pytest.approx(
                r["reward"] - sum(p["reward"] for p in peers) / len(peers)
            )
    if not independent:  # group-sticky: one model endpoint per group, groups spread evenly
        assert len({r["advantage"] for r in remote.rows}) > 1
        assert all(len({r["endpoint"] for r in rows}) == 1 for rows in by_example.values())
        assert sorted(e["groups"] for e in remote.metadata["endpoints"]) == [N // 2, N // 2]
    # Cleanup ran once per rollout, on the driver, after scoring; never on the server.
    cleaned = _lines(driver_log)
    assert sorted((c["example_id"], c["rollout_index"]) for c in cleaned) == sorted(
        (r["example_id"], r["rollout_index"]) for r in remote.rows
    )
    rewards = {(r["example_id"], r["rollout_index"]): r["reward"] for r in remote.rows}
    assert all(c["reward"] == rewards[(c["example_id"], c["rollout_index"])] for c in cleaned)
    assert _lines(server_log) == []
    assert remote.metadata["executor"] == "remote"
    assert remote.metadata["servers"] == [{"url": srv.url, "rollouts": N * R}]


async def test_server_grades_then_cleans_up_once(
    fake_server: FakeServerProcess, served: tuple[ServerProc, Path]
) -> None:
    srv, server_log = served
    server_log.unlink(missing_ok=True)
    ask = dict(
        initial_messages=[{"role": "user", "content": "What is 2 + 5?"}],
        chat_completions_url=fake_server.base_url,
        label="7",
        metadata={"model": MODEL, "info": {"bonus": 1}},
    )
    async with RolloutClient(srv.url, api_key=KEY) as rc:
        graded = await rc.run_rollout(rollout_id=uuid.uuid4().hex, **ask)
        ungraded = await rc.run_rollout(rollout_id=uuid.uuid4().hex, grade=False, **ask)
        contradictory = await rc.run_rollout(
            rollout_id=uuid.uuid4().hex,
            **{**ask, "metadata": {**ask["metadata"], "return_state": True}},
        )
    assert graded.status == "success" and graded.sample is not None
    # correct + 0.1 * index 0 + bonus 1: the rubric ran on the server...
    expected = float("\\boxed{7}" in graded.sample.completion[-1]["content"]) + 1.0
    assert graded.sample.reward == pytest.approx(expected)
    assert (
        ungraded.status == "success"
        and ungraded.sample is not None
        and ungraded.sample.reward is None
    )
    # ...and cleanup ran once per rollout, after grading (it saw the reward).
    assert [c["reward"] for c in _lines(server_log)] == [pytest.approx(expected), None]
    assert contradictory.status == "failure" and contradictory.err_category == "validation_error"
    assert "grade=false" in (contradictory.err_message or "")


def test_resume_through_the_remote_executor(
    fake_server: FakeServerProcess, served: tuple[ServerProc, Path], tmp_path: Path
) -> None:
    srv, _ = served
    client = vf.ChatClient(fake_server.base_url)
    env = srv_cleanup_env.load_environment(num_examples=N)
    half = env.get_eval_inputs(num_examples=N // 2, rollouts_per_example=R)
    env.generate_sync(
        half,
        client,
        MODEL,
        rollouts_per_example=R,
        results_path=str(tmp_path),
        progress=False,
        executor=vf.executors.RemoteExecutor(srv.url, api_key=KEY),
    )
    fake_server.reset()
    out = env.evaluate_sync(
        client,
        MODEL,
        rollouts_per_example=R,
        results_path=str(tmp_path),
        progress=False,
        executor=vf.executors.RemoteExecutor([srv.url], api_key=KEY),
    )
    expected = [(e, i) for e in range(N) for i in range(R)]
    assert sorted((r["example_id"], r["rollout_index"]) for r in out.rows) == expected
    assert fake_server.stats()["requests"] == (N - N // 2) * R  # only what was missing
    on_disk = read_rows(tmp_path / "results.jsonl")
    assert sorted((r["example_id"], r["rollout_index"]) for r in on_disk) == expected
    assert out.metadata["status"] == "completed"


def test_failures_are_rows_with_their_cause(
    fake_server: FakeServerProcess, served: tuple[ServerProc, Path]
) -> None:
    srv, _ = served
    env = srv_cleanup_env.load_environment(num_examples=2)
    dead_model = env.evaluate_sync(
        vf.ChatClient(f"http://127.0.0.1:{free_port()}/v1"),
        MODEL,
        progress=False,
        executor=vf.executors.RemoteExecutor(srv.url, api_key=KEY),
    )
    # The environment's own category crosses the wire (the model was unreachable from the server).
    assert [r["error"]["category"] for r in dead_model.rows] == ["model_connection"] * 2
    assert all(r["reward"] is None for r in dead_model.rows)
    assert dead_model.metadata["status"] == "completed_with_errors"
    no_server = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        MODEL,
        progress=False,
        executor=vf.executors.RemoteExecutor(f"http://127.0.0.1:{free_port()}"),
    )
    assert [r["error"]["category"] for r in no_server.rows] == ["remote_error"] * 2
    assert all(r["error"]["message"].startswith("rollout server: ") for r in no_server.rows)
    assert fake_server.stats()["requests"] == 0


def test_bad_arguments_are_refused_before_any_request(fake_server: FakeServerProcess) -> None:
    with pytest.raises(ValueError, match="at least one server"):
        vf.executors.RemoteExecutor([])
    with pytest.raises(TypeError, match="server URLs"):
        vf.executors.RemoteExecutor([42])  # type: ignore[list-item]

    class NoURL:
        async def chat(self, *a: Any, **k: Any) -> Any:
            raise AssertionError("never called")

    env = srv_cleanup_env.load_environment(num_examples=2)
    with pytest.raises(TypeError, match="RemoteExecutor needs clients with a base_url"):
        env.evaluate_sync(
            NoURL(),
            MODEL,
            progress=False,
            executor=vf.executors.RemoteExecutor("http://127.0.0.1:9"),
        )
    with pytest.raises(ValueError, match="at least one (model client|endpoint)"):
        env.evaluate_sync(
            [], MODEL, progress=False, executor=vf.executors.RemoteExecutor("http://127.0.0.1:9")
        )
    assert fake_server.stats()["requests"] == 0
    assert not hasattr(vf.Environment, "env_client")
    with pytest.raises(TypeError, match="env_client"):
        vf.SingleTurnEnv(dataset=[{"question": "1+1", "answer": "2"}], env_client=object())  # type: ignore[call-arg]


@pytest.mark.parametrize("return_state", [True, False])
async def test_a_rollout_cancelled_as_it_ends_is_still_cleaned_up_once(
    tmp_path: Path, return_state: bool
) -> None:
    log = tmp_path / "cleanup.jsonl"
    ctx = RolloutContext("r1", lambda status: None)

    class EndsCancelled(vf.Environment):
        async def rollout(
            self, input: Any, client: Any, model: str, sampling_args: Any = None
        ) -> Any:
            ctx.cancel_requested.set()  # the cancel arrives while the rollout finishes
            return self.init_state(input, model, sampling_args)

    backend = LocalBackend(
        EndsCancelled(rubric=srv_cleanup_env.TracingRubric(str(log))), model=MODEL
    )
    request = RolloutRequest(
        rollout_id="r1",
        initial_messages=[{"role": "user", "content": "hi"}],
        chat_completions_url="http://127.0.0.1:9/v1",
        grade=False,
        metadata={"return_state": return_state},
    )
    with pytest.raises(asyncio.CancelledError):
        await backend.execute(request, ctx)
    assert len(_lines(log)) == 1
    await backend.shutdown()
