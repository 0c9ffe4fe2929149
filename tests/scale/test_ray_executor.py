"""RayExecutor on a local Ray cluster: same results as in-process, worker death, cross-executor resume."""

from __future__ import annotations

import os

import pytest

import verifiers_lite as vf
from verifiers_lite.results.store import read_rows

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'verifiers_lite[ray]'")

N, R = 12, 3


def _env(n=N):
    def correct(completion, answer):
        return float(vf.extract_boxed_answer(completion[-1]["content"] or "") == answer)

    return vf.SingleTurnEnv(dataset=[{"question": f"What is {i} + {i % 5}?", "answer": str(i + i % 5)} for i in range(n)],
                            rubric=vf.Rubric([correct]), sampling_args={"temperature": 0})


@pytest.fixture(scope="module")
def ray_cluster():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _key(rows):
    return sorted((r["example_id"], r["rollout_index"], r["reward"], r["completion"][-1]["content"]) for r in rows)


def test_ray_run_equals_in_process_run(ray_cluster, fake_server):
    client = vf.ChatClient(fake_server.base_url)
    local = _env().evaluate_sync(client, "fake-arith", rollouts_per_example=R, progress=False)
    progress = []
    remote = _env().evaluate_sync(client, "fake-arith", rollouts_per_example=R, progress=False,
                                  on_progress=lambda stats, rows: progress.append(stats.done),
                                  executor=vf.RayExecutor(num_workers=2))
    assert _key(remote.rows) == _key(local.rows)
    assert progress[-1] == N * R and len(progress) == N  # streamed back group by group
    assert {r["worker"] for r in remote.rows} == {0, 1}
    for eid in range(N):  # groups stay whole on one worker
        assert len({r["worker"] for r in remote.rows if r["example_id"] == eid}) == 1
    assert remote.metadata["executor"] == "ray"


def test_killed_worker_groups_are_rerun_elsewhere(ray_cluster, fake_server, tmp_path):
    fake_server.configure(latency_ms=40)
    executor = vf.RayExecutor(num_workers=2)
    logs: list[str] = []
    killed = []

    def kill_worker_zero(stats, rows):
        if not killed and stats.done >= 6:
            killed.append(True)
            ray.kill(executor.workers[0])

    out = _env().evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-arith", rollouts_per_example=R,
                               results_path=str(tmp_path), on_progress=kill_worker_zero, on_log=logs.append,
                               max_concurrent=4,
                               progress=False, executor=executor)
    keys = [(r["example_id"], r["rollout_index"]) for r in out.rows]
    assert sorted(keys) == [(e, i) for e in range(N) for i in range(R)]  # nothing lost, nothing duplicated
    on_disk = read_rows(tmp_path / "results.jsonl")
    assert sorted((r["example_id"], r["rollout_index"]) for r in on_disk) == sorted(keys)
    assert killed and any("died" in m for m in logs)
    assert out.metadata["workers"][0]["alive"] is False
    assert all(r["error"] is None for r in out.rows)


@pytest.mark.parametrize("first", ["ray", "local"])
def test_resume_across_executors(ray_cluster, fake_server, tmp_path, first):
    client = vf.ChatClient(fake_server.base_url)
    executors = {"ray": lambda: vf.RayExecutor(num_workers=2), "local": lambda: None}
    half = _env().get_eval_inputs(num_examples=N // 2, rollouts_per_example=R)
    # the first executor runs half of the examples under the full run's metadata...
    _env().generate_sync(half, client, "fake-arith", rollouts_per_example=R, results_path=str(tmp_path),
                         progress=False, executor=executors[first]())
    fake_server.reset()
    second = "local" if first == "ray" else "ray"
    out = _env().evaluate_sync(client, "fake-arith", rollouts_per_example=R, results_path=str(tmp_path),
                               progress=False, executor=executors[second]())
    assert sorted((r["example_id"], r["rollout_index"]) for r in out.rows) == [(e, i) for e in range(N) for i in range(R)]
    assert fake_server.stats()["requests"] == (N - N // 2) * R  # ...and the second only the rest


def test_workers_are_reused_across_runs_with_the_same_configuration(ray_cluster, fake_server):
    executor = vf.RayExecutor(num_workers=2)
    client, env = vf.ChatClient(fake_server.base_url), _env()
    env.evaluate_sync(client, "fake-arith", num_examples=4, progress=False, executor=executor)
    pids = ray.get([w.pid.remote() for w in executor.workers])
    out = env.evaluate_sync(client, "fake-arith", num_examples=4, progress=False, executor=executor)
    assert ray.get([w.pid.remote() for w in executor.workers]) == pids  # no new actors
    assert len(out) == 4
    env.evaluate_sync(client, "fake-arith", num_examples=4, progress=False, executor=executor,
                      sampling_args={"temperature": 0.5})  # another configuration: fresh workers
    assert ray.get([w.pid.remote() for w in executor.workers]) != pids
    executor.shutdown()
    assert executor.workers == []
