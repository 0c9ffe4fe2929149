"""ClientGroup: one client over several endpoints of one model."""

from __future__ import annotations

import asyncio

import verifiers_lite as vf
from verifiers_lite.clients.group import ClientGroup
from verifiers_lite.clients.resolve import as_model_client, as_model_clients
from verifiers_lite.clients.routing import FAILING_STREAK
from verifiers_lite.clients.scripted import ScriptedClient


def test_group_is_an_endpoint_list_for_runs_and_one_client_when_called():
    a, b = ScriptedClient("2 + 2 = 4", delay=0.05), ScriptedClient("2 + 2 = 4", delay=0.05)
    group = ClientGroup([a, b])
    assert as_model_clients(group) == [a, b]  # evaluate routes groups over the members
    assert as_model_client(group) is group  # a judge or a direct call uses it as one client

    async def four_at_once():
        return await asyncio.gather(
            *(group.chat("m", [{"role": "user", "content": "hi"}]) for _ in range(4))
        )

    replies = asyncio.run(four_at_once())
    assert [r.content for r in replies] == ["2 + 2 = 4"] * 4
    assert (a.requests, b.requests) == (2, 2)  # least busy first: spread evenly


def test_evaluate_spreads_groups_over_the_members():
    a, b = ScriptedClient("= 0"), ScriptedClient("= 0")
    env = vf.load_environment("arithmetic", num_examples=8)
    out = env.evaluate_sync(ClientGroup([a, b]), "m", rollouts_per_example=2, progress=False)
    assert len(out) == 16 and a.requests == b.requests == 8
    for eid in range(8):  # group-sticky: both rollouts of an example on one endpoint
        assert len({r["endpoint"] for r in out.rows if r["example_id"] == eid}) == 1


def _ask(group: ClientGroup, n: int) -> list[object]:
    async def one_by_one() -> list[object]:
        out: list[object] = []
        for _ in range(n):
            try:
                out.append((await group.chat("m", [{"role": "user", "content": "hi"}])).content)
            except vf.ModelAPIError as exc:
                out.append(exc.category)
        return out

    return asyncio.run(one_by_one())


def test_a_crashed_endpoint_gets_no_more_requests():
    def crashed(messages):
        raise vf.ModelAPIError("server process exited", category="model_crashed")

    dead, alive = ScriptedClient(crashed), ScriptedClient("ok")
    # one at a time, both idle: the first request goes to the first endpoint, then never again
    assert _ask(ClientGroup([dead, alive]), 5) == ["model_crashed", "ok", "ok", "ok", "ok"]
    assert (dead.requests, alive.requests) == (1, 4)


def test_requests_fail_over_from_an_endpoint_that_keeps_failing():
    def down(messages):
        raise vf.ModelAPIError(
            "bad gateway", category="model_http_error", status=502, retryable=True
        )

    failing, healthy = ScriptedClient(down), ScriptedClient("ok")
    group = ClientGroup([failing, healthy])
    answers = _ask(group, 12)
    # idle endpoints tie, so the first keeps its turn until it counts as failing
    assert answers == ["model_http_error"] * FAILING_STREAK + ["ok"] * (12 - FAILING_STREAK)
    assert (failing.requests, healthy.requests) == (FAILING_STREAK, 12 - FAILING_STREAK)
