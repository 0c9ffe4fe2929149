"""RayExecutor on a local Ray cluster: same results as in-process, worker death and its cause,
the survivors' concurrency, cross-executor resume."""

from __future__ import annotations

import importlib
import os
import uuid

import pytest

import verifiers_lite as vf
from verifiers_lite.results.store import read_rows

ray = pytest.importorskip(
    "ray", reason="Ray is an optional extra: pip install 'verifiers_lite[ray]'"
)
from verifiers_lite.executors.ray import WorkerStartError  # noqa: E402

N, R = 12, 3


def _env(n=N):
    def correct(completion, answer):
        return float(vf.extract_boxed_answer(completion[-1]["content"] or "") == answer)

    return vf.SingleTurnEnv(
        dataset=[
            {"question": f"What is {i} + {i % 5}?", "answer": str(i + i % 5)} for i in range(n)
        ],
        rubric=vf.Rubric([correct]),
        sampling_args={"temperature": 0},
    )


@pytest.fixture(scope="module")
def ray_cluster():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _key(rows):
    return sorted(
        (r["example_id"], r["rollout_index"], r["reward"], r["completion"][-1]["content"])
        for r in rows
    )


def test_ray_run_equals_in_process_run(ray_cluster, fake_server):
    client = vf.ChatClient(fake_server.base_url)
    local = _env().evaluate_sync(client, "fake-arith", rollouts_per_example=R, progress=False)
    progress = []
    remote = _env().evaluate_sync(
        client,
        "fake-arith",
        rollouts_per_example=R,
        progress=False,
        on_progress=lambda stats, rows: progress.append(stats.done),
        executor=vf.executors.RayExecutor(num_workers=2),
    )
    assert _key(remote.rows) == _key(local.rows)
    assert progress[-1] == N * R and len(progress) == N  # streamed back group by group
    assert {r["worker"] for r in remote.rows} == {0, 1}
    for eid in range(N):  # groups stay whole on one worker
        assert len({r["worker"] for r in remote.rows if r["example_id"] == eid}) == 1
    assert remote.metadata["executor"] == "ray"


def test_killed_worker_groups_are_rerun_elsewhere(ray_cluster, fake_server, tmp_path):
    fake_server.configure(latency_ms=40)
    executor = vf.executors.RayExecutor(num_workers=2)
    logs: list[str] = []
    killed = []

    def kill_worker_zero(stats, rows):
        if not killed and stats.done >= 6:
            killed.append(True)
            ray.kill(executor.workers[0])

    out = _env().evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=R,
        results_path=str(tmp_path),
        on_progress=kill_worker_zero,
        on_log=logs.append,
        max_concurrent=4,
        progress=False,
        executor=executor,
    )
    keys = [(r["example_id"], r["rollout_index"]) for r in out.rows]
    assert sorted(keys) == [
        (e, i) for e in range(N) for i in range(R)
    ]  # nothing lost, nothing duplicated
    on_disk = read_rows(tmp_path / "results.jsonl")
    assert sorted((r["example_id"], r["rollout_index"]) for r in on_disk) == sorted(keys)
    assert killed and any("died" in m for m in logs)
    assert out.metadata["workers"][0]["alive"] is False
    assert all(r["error"] is None for r in out.rows)


@pytest.mark.parametrize("first", ["ray", "local"])
def test_resume_across_executors(ray_cluster, fake_server, tmp_path, first):
    client = vf.ChatClient(fake_server.base_url)
    executors = {"ray": lambda: vf.executors.RayExecutor(num_workers=2), "local": lambda: None}
    half = _env().get_eval_inputs(num_examples=N // 2, rollouts_per_example=R)
    # the first executor runs half of the examples under the full run's metadata...
    _env().generate_sync(
        half,
        client,
        "fake-arith",
        rollouts_per_example=R,
        results_path=str(tmp_path),
        progress=False,
        executor=executors[first](),
    )
    fake_server.reset()
    second = "local" if first == "ray" else "ray"
    out = _env().evaluate_sync(
        client,
        "fake-arith",
        rollouts_per_example=R,
        results_path=str(tmp_path),
        progress=False,
        executor=executors[second](),
    )
    assert sorted((r["example_id"], r["rollout_index"]) for r in out.rows) == [
        (e, i) for e in range(N) for i in range(R)
    ]
    assert fake_server.stats()["requests"] == (N - N // 2) * R  # ...and the second only the rest


def test_workers_are_reused_across_runs_with_the_same_configuration(ray_cluster, fake_server):
    executor = vf.executors.RayExecutor(num_workers=2)
    client, env = vf.ChatClient(fake_server.base_url), _env()
    env.evaluate_sync(client, "fake-arith", num_examples=4, progress=False, executor=executor)
    pids = ray.get([w.pid.remote() for w in executor.workers])
    out = env.evaluate_sync(client, "fake-arith", num_examples=4, progress=False, executor=executor)
    assert ray.get([w.pid.remote() for w in executor.workers]) == pids  # no new actors
    assert len(out) == 4
    env.evaluate_sync(
        client,
        "fake-arith",
        num_examples=4,
        progress=False,
        executor=executor,
        sampling_args={"temperature": 0.5},
    )  # another configuration: fresh workers
    assert ray.get([w.pid.remote() for w in executor.workers]) != pids
    executor.shutdown()
    assert executor.workers == []


def test_a_worker_that_cannot_build_the_environment_fails_the_run_with_its_cause(
    ray_cluster, fake_server, tmp_path, monkeypatch
):
    # A reward function from a module only on the driver's path: workers cannot unpickle it.
    name = f"driver_only_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("def correct(completion, answer):\n    return 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    env = vf.SingleTurnEnv(
        dataset=[{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(20)],
        rubric=vf.Rubric([module.correct]),
    )
    logs: list[str] = []
    with pytest.raises(
        WorkerStartError, match=f"ModuleNotFoundError: No module named '{name}'"
    ) as caught:
        env.evaluate_sync(
            vf.ChatClient(fake_server.base_url),
            "fake-arith",
            on_log=logs.append,
            progress=False,
            executor=vf.executors.RayExecutor(num_workers=2),
        )
    assert "no Ray worker could start" in str(caught.value)
    assert any(f"No module named '{name}'" in m for m in logs)  # on_log hears it as it happens
    assert fake_server.stats()["requests"] == 0


def test_the_cause_reaches_the_rows_when_every_worker_dies(ray_cluster, fake_server):
    fake_server.configure(latency_ms=40)
    executor = vf.executors.RayExecutor(num_workers=2)
    logs: list[str] = []

    def kill_all(stats, rows):
        if executor.workers and all(executor.alive):
            for w in executor.workers:
                ray.kill(w)

    out = _env().evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=R,
        on_progress=kill_all,
        on_log=logs.append,
        max_concurrent=2,
        progress=False,
        executor=executor,
    )
    failed = [r for r in out.rows if r["error"]]
    assert len(out.rows) == N * R and failed
    assert all(
        "all Ray workers died" in r["error"]["message"]
        and "first failure: worker" in r["error"]["message"]
        for r in failed
    )
    assert out.metadata["status"] == "completed_with_errors"
    assert len(out.metadata["worker_failures"]) == 2
    assert sum("died" in m for m in logs) == 2


def test_survivors_take_over_a_dead_workers_share_of_max_concurrent(ray_cluster, fake_server):
    executor = vf.executors.RayExecutor(num_workers=2)
    client, env = vf.ChatClient(fake_server.base_url), _env()
    env.evaluate_sync(
        client, "fake-arith", num_examples=2, max_concurrent=4, progress=False, executor=executor
    )
    ray.kill(executor.workers[0])  # the next run reuses the workers and finds this one dead
    fake_server.reset()
    fake_server.configure(latency_ms=300)
    logs: list[str] = []
    out = env.evaluate_sync(
        client,
        "fake-arith",
        rollouts_per_example=R,
        max_concurrent=4,
        progress=False,
        on_log=logs.append,
        executor=executor,
    )
    assert all(r["error"] is None for r in out.rows) and len(out.rows) == N * R
    assert out.metadata["workers"][0]["alive"] is False and any("worker 0 died" in m for m in logs)
    # Worker 1 alone keeps the run's 4 requests in flight (its own share was 2).
    assert fake_server.stats()["max_in_flight"] == 4
