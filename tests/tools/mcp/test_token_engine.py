"""The token engine's tool path (``ToolManager``) gets the same MCP tools: offered with their
schemas, dispatched, driven end to end by the fake tool model through ``APIMultiTurnRollout``."""

from __future__ import annotations

import json

import pytest

import verifiers_lite as vf
from tests.tools.mcp.helpers import new_tag, server_processes, tagged_server
from verifiers_lite.clients import OpenAIChatAPI
from verifiers_lite.envs import APIMultiTurnRollout
from verifiers_lite.rollout import (
    MultiTurnRollout,
    ParsedToolCall,
    SamplingParams,
    ToolManager,
)
from verifiers_lite.rollout.testing import ScriptedSampler, toy_template
from verifiers_lite.testing.fake_server import FakeServerProcess


def double(x: int) -> int:
    """Twice x."""
    return 2 * x


@pytest.mark.parametrize("lifetime", ["shared", "rollout"])
def test_api_multi_turn_rollout_calls_the_mcp_calculator(
    fake_server: FakeServerProcess, lifetime: str
) -> None:
    tag = new_tag()
    tm = ToolManager([double], mcp_servers=[tagged_server(tag, lifetime=lifetime, faults=False)])  # type: ignore[arg-type]
    assert tm.names == ["double", "calculator", "add", "kv_set", "kv_get", "kv_incr"]
    rollout = APIMultiTurnRollout(
        OpenAIChatAPI("fake-tool", base_url=fake_server.base_url), tm, max_turns=3
    )
    out = rollout(
        [
            [{"role": "user", "content": "What is 31 * 3?"}],
            [{"role": "user", "content": "What is 8 - 50?"}],
        ]
    )
    for traj, value in zip(out, [93, -42], strict=True):
        assert traj["stop_reason"] == "stop" and traj["error"] is None and traj["tool_errors"] == []
        tool_msg = next(m for m in traj["messages"] if m["role"] == "tool")
        assert tool_msg["content"] == str(value)
        assert traj["messages"][-1]["content"] == f"The calculator says \\boxed{{{value}}}."
    tm.close()  # a shared server used outside an environment's run stops here
    assert server_processes(tag=tag) == []


def test_dispatch_answers_mcp_failures_as_tool_messages_with_their_kind() -> None:
    tag = new_tag()
    tm = ToolManager(mcp_servers=[tagged_server(tag)], timeout=1.0)
    calls = [
        ParsedToolCall("a", "kv_incr", json.dumps({"key": "k"})),
        ParsedToolCall("b", "add", json.dumps({"a": 1})),
        ParsedToolCall("c", "hang", "{}"),
        ParsedToolCall("d", "kv_incr", json.dumps({"key": "k"})),
    ]
    try:
        first, missing, hung, second = tm.dispatch(calls)
        again = tm.dispatch(calls[3:])  # another sync call: the same server, its state kept
    finally:
        tm.close()
    assert {first["content"], second["content"]} == {"1", "2"} and again[0]["content"] == "3"
    assert (
        missing["error"] == "bad_arguments" and "'b' is a required property" in missing["content"]
    )
    assert hung["error"] == "timeout" and hung["tool_call_id"] == "c"
    assert server_processes(tag=tag) == []


def test_a_per_rollout_server_called_outside_a_rollout_is_an_error_naming_it() -> None:
    tm = ToolManager(mcp_servers=[tagged_server(new_tag(), lifetime="rollout")])
    with pytest.raises(
        vf.ToolServerError, match="lifetime='rollout' but was called outside a rollout"
    ):
        tm.dispatch([ParsedToolCall("a", "add", json.dumps({"a": 1, "b": 2}))])


def _incr_then_answer(prompt: str) -> str:
    """Token-level model: a Hermes tool call to kv_incr, then the tool's answer repeated."""
    if prompt.count("<|im_start|>tool") == 0:
        return '<tool_call>\n{"name": "kv_incr", "arguments": {"key": "n"}}\n</tool_call>'
    return "count " + prompt.rsplit("<|im_start|>tool\n", 1)[1].split("<|im_end|>", 1)[0]


def test_multi_turn_rollout_token_ids_with_mcp_tools_one_manager_per_trajectory() -> None:
    tag = new_tag()
    template = toy_template()
    # A shared server per ToolManager: one manager per trajectory isolates their state.
    managers = [ToolManager(mcp_servers=[tagged_server(tag)]) for _ in range(2)]
    rollout = MultiTurnRollout(
        ScriptedSampler(template, _incr_then_answer),
        template,
        sampling_params=SamplingParams(max_tokens=100),
        max_turns=3,
    )
    try:
        out = rollout(
            [[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]],
            tool_manager=managers,
        )
    finally:
        for tm in managers:
            tm.close()
    for traj in out:
        assert traj["stop_reason"] == "stop" and traj["error"] is None, traj.get("error")
        assert traj["messages"][-1]["content"] == "count 1"  # each manager's own counter
        assert traj["completion_ids"] and len(traj["completion_mask"]) == len(
            traj["completion_ids"]
        )
    assert server_processes(tag=tag) == []
