"""Many rollouts on one server: thousands admitted, held, answered and expired under a manual
clock; long polls woken by their result, not by their timeout; batched admission and polls."""

from __future__ import annotations

import asyncio
import re
import signal
from typing import Any

import httpx

from tests.server.helpers import HeldBackend, script
from verifiers_lite.server.protocol import LEASE_HEADER, RolloutRequest
from verifiers_lite.server.rollout_table import RolloutRecord
from verifiers_lite.server.service import RolloutService
from verifiers_lite.testing.clock import ManualClock
from verifiers_lite.testing.waiting import wait_until_async

N = 2000  # in flight at once in-process (the benchmark runs 10,000 over HTTP)


def _request(rid: str) -> RolloutRequest:
    return RolloutRequest(
        rollout_id=rid,
        initial_messages=[{"role": "user", "content": "q"}],
        chat_completions_url="http://127.0.0.1:9/v1",
        grade=False,
    )


async def test_thousands_in_flight_expire_exactly_the_unpolled_ones() -> None:
    clock, backend = ManualClock(), HeldBackend()
    service = RolloutService(
        backend, polling_lease_timeout_sec=60, result_retention_sec=900, clock=clock
    )
    ids = [f"r{i}" for i in range(N)]
    records = {rid: service.admit(_request(rid)) for rid in ids}
    assert len({r.lease_token for r in records.values()}) == N
    assert service.registry.active_count == N
    await wait_until_async(lambda: len(backend.tasks) == N, "every rollout running")

    finished = set(ids[0::4])  # answered before any lease runs out
    renewed = set(ids[1::4])  # polled at t=30, so their lease runs to t=90
    unpolled = set(ids) - finished - renewed
    for rid in finished:
        backend.release(rid)
    await wait_until_async(
        lambda: all(records[r].result is not None for r in finished), "released ones finish"
    )
    clock.advance(30)
    for rid in renewed:
        service.registry.renew(records[rid])
    clock.advance(31)  # t=61: past the first lease, before the renewed one; the sweeper runs
    await wait_until_async(
        lambda: all(records[r].result is not None for r in unpolled), "unpolled ones expire"
    )
    await wait_until_async(lambda: backend.cancelled == unpolled, "their work cancelled")

    assert {
        r
        for r in ids
        if records[r].result is not None and records[r].result.status.value == "success"
    } == finished
    assert all(records[r].result.err_category.value == "lease_expired" for r in unpolled)  # type: ignore[union-attr]
    assert all(records[r].result is None and not backend.tasks[r].done() for r in renewed)

    clock.advance(30)  # t=91: the renewed leases run out too
    await wait_until_async(
        lambda: backend.cancelled == unpolled | renewed, "renewed ones expire later"
    )
    assert await service.registry.wait_idle(60)
    assert service.registry.active_count == 0
    await service.stop_sweeper()


class _CountedScans(dict):  # type: ignore[type-arg]
    """The registry's record table, counting whole-table scans."""

    scans = 0

    def values(self) -> Any:
        self.scans += 1
        return super().values()

    def items(self) -> Any:
        self.scans += 1
        return super().items()


async def test_sweeps_touch_only_what_is_due_and_purge_on_time() -> None:
    clock, backend = ManualClock(), HeldBackend()
    service = RolloutService(
        backend, polling_lease_timeout_sec=60, result_retention_sec=100, clock=clock
    )
    registry = service.registry
    registry._records = table = _CountedScans(registry._records)
    records = [service.admit(_request(f"s{i}")) for i in range(N)]
    await wait_until_async(lambda: len(backend.tasks) == N, "every rollout running")
    backend.release("s0")
    await wait_until_async(lambda: not records[0].active, "s0 finished")
    clock.advance(10)
    backend.release("s1")
    await wait_until_async(lambda: not records[1].active, "s1 finished")
    for _ in range(3):  # renewed at t=13, 16 and 19: its lease now runs to t=79
        clock.advance(3)
        registry.renew(records[2])
    clock.advance(50)  # t=69: every other live lease ran out at t=60
    await service.sweep()
    assert {r.rollout_id for r in records if r.result is not None and r.result.err_category} == {
        f"s{i}" for i in range(3, N)
    }  # all but the finished two and the renewed one
    clock.advance(10)  # t=79: the renewed lease runs out at the next sweep
    await service.sweep()
    assert records[2].result is not None and records[2].result.err_category == "lease_expired"
    await wait_until_async(lambda: registry.active_count == 0, "every expired task ended")
    clock.advance(
        100.0 - clock.now()
    )  # s0 finished at t=0, s1 at t=10: only s0 is past its retention
    await service.sweep()
    assert registry.get("s0") is None and registry.get("s1") is records[1]
    clock.advance(10)  # t=110
    await service.sweep()
    assert registry.get("s1") is None and registry.get("s2") is records[2]  # retained from t=79
    assert table.scans == 0  # no sweep went through every record
    await service.stop_sweeper()


async def test_long_poll_is_woken_by_its_result_not_its_timeout() -> None:
    backend = HeldBackend()
    service = RolloutService(backend, polling_lease_timeout_sec=7200, result_retention_sec=900)
    record = service.admit(_request("one"))
    poll = asyncio.ensure_future(service.registry.wait_terminal(record, 3600))
    await wait_until_async(lambda: len(record.terminal_waiters) == 1, "the poll is parked")
    backend.release("one")
    await asyncio.wait_for(poll, 30)  # an hour's timeout: only the result can end it this soon
    assert record.result is not None and record.result.status.value == "success"
    assert record.terminal_waiters == []
    await service.stop_sweeper()


async def test_one_poll_over_many_rollouts_wakes_on_the_first_result() -> None:
    backend = HeldBackend()
    service = RolloutService(backend, polling_lease_timeout_sec=7200, result_retention_sec=900)
    records: list[RolloutRecord] = [service.admit(_request(f"m{i}")) for i in range(500)]
    poll = asyncio.ensure_future(service.registry.wait_any_terminal(records, 3600))
    await wait_until_async(
        lambda: all(len(r.terminal_waiters) == 1 for r in records), "parked on every rollout"
    )
    backend.release("m321")
    await asyncio.wait_for(poll, 30)
    assert [r.rollout_id for r in records if r.result is not None] == ["m321"]
    assert all(r.terminal_waiters == [] for r in records)  # nothing left behind on the others
    for i in range(500):
        backend.release(f"m{i}")
    assert await service.registry.wait_idle(60)
    await service.stop_sweeper()


def _body(rid: str, **script_kw: Any) -> dict[str, Any]:
    return {
        "rollout_id": rid,
        "initial_messages": [{"role": "user", "content": "q"}],
        "chat_completions_url": "http://127.0.0.1:9/v1",
        "label": "42",
        "metadata": script(**script_kw),
    }


async def test_batch_admission_answers_each_rollout_as_its_own_post_would(spawn: Any) -> None:
    srv = spawn(max_concurrent=16, max_admitted=20, wait=5)
    bodies = [_body(f"b{i}", run_sec=0.2, reward=i) for i in range(24)]
    bodies[3] = _body("b1", reward=99)  # a duplicate within the batch
    bodies[5] = {**_body("x"), "rollout_id": "a/b"}  # invalid
    expected: list[int] = []
    seen: set[str] = set()
    for b in bodies:  # what POST /rollout would answer, one by one
        if "/" in b["rollout_id"]:
            expected.append(422)
        elif b["rollout_id"] in seen:
            expected.append(409)
        elif len(seen) >= 20:
            expected.append(429)
        else:
            seen.add(b["rollout_id"])
            expected.append(202)
    async with httpx.AsyncClient(base_url=srv.url, timeout=30) as http:
        r = await http.post("/rollouts", json={"rollouts": bodies})
        assert r.status_code == 200
        answers = r.json()["results"]
        assert [a["status_code"] for a in answers] == expected
        assert answers[5]["detail"][0]["loc"] == ["body", "rollouts", 5, "rollout_id"]
        assert answers[-1]["retry_after_sec"] == 0.05
        admitted = [(b, a) for b, a in zip(bodies, answers, strict=True) if a["status_code"] == 202]
        assert len({a["polling_lease_token"] for _, a in admitted}) == len(admitted) == 20
        for b, a in admitted:  # each one is an ordinary rollout: polled with plain GETs
            res = await http.get(
                f"/rollout/{a['rollout_id']}/result",
                params={"wait": "terminal"},
                headers={LEASE_HEADER: a["polling_lease_token"]},
            )
            assert res.status_code == 200
            assert res.json()["status"] == "success"
            assert res.json()["sample"]["reward"] == b["metadata"]["script"]["reward"]
        for bad in (
            {"rollouts": []},
            {"rollouts": bodies[:1], "x": 1},
            [bodies[0]],
            {"rollouts": "b0"},
        ):
            assert (await http.post("/rollouts", json=bad)).status_code == 422


async def test_batch_poll_returns_results_as_they_finish(spawn: Any) -> None:
    srv = spawn(max_concurrent=8, max_admitted=8, wait=20)
    run_sec = {"s0": 0.0, "s1": 2.0, "s2": 5.0}
    async with httpx.AsyncClient(base_url=srv.url, timeout=60) as http:
        r = await http.post(
            "/rollouts",
            json={"rollouts": [_body(k, run_sec=v, reward=1) for k, v in run_sec.items()]},
        )
        leases = {a["rollout_id"]: a["polling_lease_token"] for a in r.json()["results"]}
        asked = {"nope": "x", **leases, "s1": "wrong-token"}
        first = (await http.post("/rollouts/results", json={"leases": asked})).json()["results"]
        assert [a["status_code"] for a in first] == [404, 200, 403, 200]
        assert [a.get("rollout_id") for a in first] == [None, "s0", None, "s2"]
        assert first[1]["status"] == "success"
        assert first[3]["status"] in ("queued", "running", "grading")  # 5 s to go
        pending = {"s1": leases["s1"], "s2": leases["s2"]}
        done: dict[str, dict[str, Any]] = {}
        while pending:
            answers = (await http.post("/rollouts/results", json={"leases": pending})).json()[
                "results"
            ]
            assert [a["rollout_id"] for a in answers] == list(pending)
            finished = [a for a in answers if a["status"] == "success"]
            assert finished  # woken by a result: the 20 s wait never ran out
            for a in finished:
                done[a["rollout_id"]] = a
                del pending[a["rollout_id"]]
        for rid in ("s1", "s2"):
            single = (
                await http.get(f"/rollout/{rid}/result", headers={LEASE_HEADER: leases[rid]})
            ).json()
            assert {**single, "status_code": 200} == done[rid]


async def test_sigterm_with_hundreds_held_answers_every_poll_then_exits(spawn: Any) -> None:
    import aiohttp

    n = 300
    srv = spawn(max_concurrent=n, wait=60, lease=120)
    async with httpx.AsyncClient(base_url=srv.url, timeout=60) as http:
        # 8 s each: every poll is parked well before they end, and they end within the 10 s drain.
        r = await http.post(
            "/rollouts", json={"rollouts": [_body(f"t{i}", run_sec=8, reward=i) for i in range(n)]}
        )
        accepted = r.json()["results"]
        assert [a["status_code"] for a in accepted] == [202] * n
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as polls:

            async def poll(a: dict[str, Any]) -> dict[str, Any]:
                async with polls.get(
                    f"{srv.url}/rollout/{a['rollout_id']}/result",
                    params={"wait": "terminal"},
                    headers={LEASE_HEADER: a["polling_lease_token"]},
                ) as resp:
                    assert resp.status == 200
                    data: dict[str, Any] = await resp.json()
                    return data

            tasks = [asyncio.ensure_future(poll(a)) for a in accepted]

            async def all_parked() -> bool:
                assert not any(t.done() for t in tasks)  # none answered before the signal
                return bool((await http.get("/health")).json()["held_polls"] == n)

            await wait_until_async(all_parked, "every poll parked on the server", timeout=60)
            srv.proc.send_signal(signal.SIGTERM)
            results = await asyncio.gather(*tasks)
    assert [(d["rollout_id"], d["status"], d["sample"]["reward"]) for d in results] == [
        (f"t{i}", "success", i) for i in range(n)
    ]
    assert await asyncio.to_thread(srv.proc.wait, 60) == 0
    assert re.findall(r"shutdown phase: (\w+)", srv.log()) == [
        "stop_admission",
        "drain",
        "close_registry",
        "backend_shutdown",
        "done",
    ]
