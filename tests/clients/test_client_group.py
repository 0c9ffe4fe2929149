"""ClientGroup: one client over several endpoints of one model."""

from __future__ import annotations

import asyncio

import verifiers_lite as vf
from verifiers_lite.clients.group import ClientGroup
from verifiers_lite.clients.resolve import as_model_client, as_model_clients
from verifiers_lite.clients.scripted import ScriptedClient


def test_group_is_an_endpoint_list_for_runs_and_one_client_when_called():
    a, b = ScriptedClient("2 + 2 = 4", delay=0.05), ScriptedClient("2 + 2 = 4", delay=0.05)
    group = ClientGroup([a, b])
    assert as_model_clients(group) == [a, b]  # evaluate routes groups over the members
    assert as_model_client(group) is group  # a judge or a direct call uses it as one client

    async def four_at_once():
        return await asyncio.gather(*(group.chat("m", [{"role": "user", "content": "hi"}]) for _ in range(4)))

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
