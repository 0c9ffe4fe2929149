"""Many endpoints: group stickiness, even spread, failover and its report (two real fake servers)."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

import verifiers_lite as vf
from verifiers_lite.clients.routing import FAILING_STREAK
from verifiers_lite.testing.fake_server import FakeServerProcess, free_port


def rows_env(n: int) -> vf.SingleTurnEnv:
    rows = [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(n)]
    return vf.SingleTurnEnv(dataset=rows)


@pytest.fixture
def second_server():
    with FakeServerProcess() as server:
        yield server


def endpoints_by_example(rows):
    seen: dict[int, set[str]] = defaultdict(set)
    for r in rows:
        seen[r["example_id"]].add(r["endpoint"])
    return seen


@pytest.mark.parametrize("max_concurrent", [1, 3, 64])
def test_groups_stick_to_one_endpoint_and_spread_evenly(fake_server, second_server, max_concurrent):
    a, b = vf.ChatClient(fake_server.base_url), vf.ChatClient(second_server.base_url)
    out = rows_env(10).evaluate_sync(
        [a, b], "fake-arith", rollouts_per_example=4, max_concurrent=max_concurrent, progress=False
    )
    assert len(out) == 40
    per_example = endpoints_by_example(out.rows)
    assert all(len(eps) == 1 for eps in per_example.values()), per_example  # sticky
    groups = Counter(next(iter(eps)) for eps in per_example.values())
    assert groups == {a.base_url: 5, b.base_url: 5}  # even
    assert fake_server.stats()["requests"] == 20 and second_server.stats()["requests"] == 20
    summary = {e["name"]: e for e in out.metadata["endpoints"]}
    assert summary[a.base_url]["groups"] == 5 and summary[b.base_url]["requests"] == 20


def test_uneven_group_count_differs_by_at_most_one(fake_server, second_server):
    third = vf.ChatClient(
        fake_server.base_url.replace("/v1", "/v1/")
    )  # same server, another endpoint name
    clients = [vf.ChatClient(fake_server.base_url), vf.ChatClient(second_server.base_url), third]
    out = rows_env(7).evaluate_sync(clients, "fake-arith", rollouts_per_example=3, progress=False)
    counts = sorted(e["groups"] for e in out.metadata["endpoints"])
    assert sum(counts) == 7 and counts[-1] - counts[0] <= 1


def test_failing_endpoint_is_reported_once_and_new_groups_fail_over(fake_server, second_server):
    second_server.configure(faults=[{"status": 500, "message": "GPU fell off"}] * 1000)
    fast = vf.RetryPolicy(max_attempts=1)
    good, bad = (
        vf.ChatClient(fake_server.base_url, retry=fast),
        vf.ChatClient(second_server.base_url, retry=fast),
    )
    logs: list[str] = []
    out = rows_env(16).evaluate_sync(
        [good, bad],
        "fake-arith",
        rollouts_per_example=2,
        max_concurrent=2,
        progress=False,
        on_log=logs.append,
    )
    assert len(out) == 32
    failing = [m for m in logs if "keeps failing" in m]
    assert len(failing) == 1 and bad.base_url in failing[0] and "GPU fell off" in failing[0]
    by_endpoint = defaultdict(list)
    for r in out.rows:
        by_endpoint[r["endpoint"]].append(r)
    assert all(r["error"] is None for r in by_endpoint[good.base_url])
    assert all(r["error"]["category"] == "model_http_error" for r in by_endpoint[bad.base_url])
    assert "GPU fell off" in by_endpoint[bad.base_url][0]["error"]["message"]
    # once reported, the failing endpoint gets no new groups: the healthy one takes the rest
    bad_groups = len(by_endpoint[bad.base_url]) // 2
    assert bad_groups <= FAILING_STREAK // 2 + 2, bad_groups
    assert len(by_endpoint[good.base_url]) >= 32 - 2 * (FAILING_STREAK // 2 + 2)


def test_unreachable_endpoint_is_reported_with_a_connection_error(fake_server):
    dead = vf.ChatClient(f"http://127.0.0.1:{free_port()}/v1", retry=vf.RetryPolicy(max_attempts=1))
    logs: list[str] = []
    out = rows_env(12).evaluate_sync(
        [dead, vf.ChatClient(fake_server.base_url)],
        "fake-arith",
        max_concurrent=1,
        progress=False,
        on_log=logs.append,
    )
    assert any(dead.base_url in m and "keeps failing" in m for m in logs), logs
    dead_rows = [r for r in out.rows if r["endpoint"] == dead.base_url]
    assert dead_rows and all(r["error"]["category"] == "model_connection" for r in dead_rows)
    assert len(dead_rows) <= FAILING_STREAK + 1
    assert sum(r["error"] is None for r in out.rows) == 12 - len(dead_rows)


def test_every_row_names_its_endpoint_with_a_single_client(fake_server):
    out = rows_env(3).evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-arith", progress=False
    )
    assert {r["endpoint"] for r in out.rows} == {fake_server.base_url}
