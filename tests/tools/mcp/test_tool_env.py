"""ToolEnv with a real MCP server subprocess (the example server over stdio).

Driven by the fake server's tool-calling model and by scripted tool calls: schemas offered, the
model's arguments passed, results as tool messages, every failure answered or categorised like a
Python tool's, a crashing server and a hanging tool, shared against per-rollout state.
"""

from __future__ import annotations

import asyncio
import pickle
import re

import pytest

import verifiers_lite as vf
from tests.tools.mcp.helpers import new_tag, server_processes, tagged_server, tool_texts
from verifiers_lite.testing.fake_server import FakeServerProcess

QUESTIONS = [(17, "+", 25), (12, "*", 13), (100, "-", 58)]


def _hand(a: int, op: str, b: int) -> int:
    return {"+": a + b, "-": a - b, "*": a * b}[op]


def _boxed_reward(completion, answer) -> float:
    text = completion[-1]["content"] or ""
    return float(vf.extract_boxed_answer(text) == answer)


def test_fake_tool_model_calls_the_servers_calculator_and_is_scored(
    fake_server: FakeServerProcess,
) -> None:
    rows = [
        {"question": f"What is {a} {op} {b}?", "answer": str(_hand(a, op, b))}
        for a, op, b in QUESTIONS
    ]
    env = vf.ToolEnv(
        mcp_servers=[tagged_server(new_tag(), faults=False)],
        dataset=rows,
        rubric=vf.Rubric([_boxed_reward]),
        max_turns=3,
    )
    calculator = next(d for d in env.tool_defs if d["function"]["name"] == "calculator")
    # The server's own JSON schema and description, offered to the model.
    assert calculator["function"]["parameters"]["properties"]["expression"]["type"] == "string"
    assert calculator["function"]["parameters"]["required"] == ["expression"]
    assert "arithmetic expression" in calculator["function"]["description"]

    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-tool", rollouts_per_example=2
    )

    assert [r["reward"] for r in out.rows] == [1.0] * 6
    for row in out.rows:
        a, op, b = QUESTIONS[row["example_id"]]
        assert row["error"] is None and row["stop_reason"] == "stop" and row["turns"] == 2
        assert tool_texts(row) == [str(_hand(a, op, b))]


def test_scripted_calls_failures_are_answered_to_the_model_and_the_run_goes_on() -> None:
    calls = [
        [
            {"name": "add", "arguments": {"a": 2, "b": 40}},
            {"name": "add", "arguments": {"a": 2, "b": "x"}},
            {"name": "add", "arguments": {"a": 2}},
            {"name": "fail", "arguments": {"message": "the disk is full"}},
            {"name": "no_such_tool", "arguments": {}},
            {"name": "hang", "arguments": {}},
            {"name": "kv_set", "arguments": {"key": "k", "value": "v"}},
        ],
        [{"name": "kv_get", "arguments": {"key": "k"}}],
        None,
    ]
    env = vf.ToolEnv(
        mcp_servers=[tagged_server(new_tag())],
        dataset=[{"question": "go", "answer": ""}],
        max_turns=4,
        tool_timeout=1.0,
    )
    out = env.evaluate_sync(vf.ScriptedClient(["", "", "done"], tool_calls=calls), "scripted")

    row = out.rows[0]
    assert row["error"] is None and row["stop_reason"] == "stop" and row["turns"] == 3
    texts = tool_texts(row)
    assert texts[0] == "42"
    assert (
        texts[1]
        == "Error (bad_arguments) calling tool 'add': invalid arguments: b: 'x' is not of type 'integer'"
    )
    assert (
        texts[2]
        == "Error (bad_arguments) calling tool 'add': invalid arguments: arguments: 'b' is a required property"
    )
    assert (
        texts[3].startswith("Error (exception) calling tool 'fail': ")
        and "the disk is full" in texts[3]
    )
    assert texts[4].startswith(
        "Error (unknown_tool) calling tool 'no_such_tool': no such tool; available: calculator, add"
    )
    assert texts[5] == "Error (timeout) calling tool 'hang': timed out after 1.0 s"
    assert texts[6:] == ["stored k", "v"]  # the server went on after the timed-out call


def _incr_script(messages):
    turn = sum(1 for m in messages if m["role"] == "assistant")
    return [{"name": "kv_incr", "arguments": {"key": "hits"}}] if turn == 0 else None


@pytest.mark.parametrize(
    ("lifetime", "expected"), [("shared", [1, 2, 3, 4]), ("rollout", [1, 1, 1, 1])]
)
def test_lifetime_shared_sees_other_rollouts_state_per_rollout_does_not(
    lifetime: str, expected: list[int]
) -> None:
    tag = new_tag()
    env = vf.ToolEnv(
        mcp_servers=[tagged_server(tag, lifetime=lifetime)],  # type: ignore[arg-type]
        dataset=[{"question": f"q{i}", "answer": ""} for i in range(2)],
        max_turns=2,
    )
    out = env.evaluate_sync(
        vf.ScriptedClient(["", "done"], tool_calls=_incr_script), "scripted", rollouts_per_example=2
    )
    counts = sorted(int(tool_texts(r)[0]) for r in out.rows)
    assert counts == expected  # one counter for the run, or a fresh one per rollout
    assert all(r["error"] is None for r in out.rows)
    assert server_processes(tag=tag) == []


class _CrashWatch(vf.ToolEnv):
    """Sets ``crashed`` when a tool call lost the server, so other rollouts can call after it."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.crashed = asyncio.Event()

    async def env_response(self, messages, state):
        try:
            return await super().env_response(messages, state)
        except vf.ToolServerError:
            self.crashed.set()
            raise


def _crash_or_add(env: _CrashWatch):
    async def script(messages):
        if sum(1 for m in messages if m["role"] == "assistant"):
            return None
        if "crash" in messages[-1]["content"]:
            return [{"name": "crash", "arguments": {"code": 7}}]
        await asyncio.wait_for(env.crashed.wait(), 60)  # call only once the server has crashed
        a, b = (int(x) for x in re.findall(r"\d+", messages[-1]["content"]))
        return [{"name": "add", "arguments": {"a": a, "b": b}}]

    return script


def _sum_reward(completion, answer) -> float:
    return float(any(m["role"] == "tool" and m["content"] == answer for m in completion))


@pytest.mark.parametrize("lifetime", ["rollout", "shared"])
def test_a_server_crashing_mid_call_errors_its_row_and_the_others_complete(lifetime: str) -> None:
    tag = new_tag()
    rows = [
        {"question": "please crash", "answer": "-"},
        *(
            {"question": f"add {a} and {b}", "answer": str(a + b)}
            for a, b in [(3, 4), (20, 22), (7, 8)]
        ),
    ]
    env = _CrashWatch(
        mcp_servers=[tagged_server(tag, lifetime=lifetime)],
        dataset=rows,  # type: ignore[arg-type]
        rubric=vf.Rubric([_sum_reward]),
        max_turns=2,
    )
    out = env.evaluate_sync(
        vf.ScriptedClient(["", "done"], tool_calls=_crash_or_add(env)), "scripted"
    )

    crashed, *others = sorted(out.rows, key=lambda r: r["example_id"])
    assert crashed["error"]["category"] == "env_error"
    message = crashed["error"]["message"]
    assert message.startswith(
        "ToolServerError: MCP server 'example' stopped answering during the call to 'crash'"
    )
    assert "crashing on request (exit code 7)" in message  # the tail of its stderr
    # Per rollout, the others have servers of their own; shared, the next call starts it again.
    assert [r["error"] for r in others] == [None, None, None]
    assert [r["reward"] for r in others] == [1.0, 1.0, 1.0]  # 3+4, 20+22, 7+8 by the tool
    assert server_processes(tag=tag) == []


class _SecretKeeper(vf.ToolEnv):
    """Environment code calling an MCP tool itself: each rollout's secret is stored on its own
    server in setup_state; the model must read it back."""

    async def setup_state(self, state) -> None:
        await self.tools["kv_set"](key="secret", value=state["answer"])


def test_environment_code_calls_a_per_rollout_servers_tool_in_setup_state() -> None:
    rows = [{"question": f"q{i}", "answer": f"secret-{i}"} for i in range(3)]
    env = _SecretKeeper(
        mcp_servers=[tagged_server(new_tag(), lifetime="rollout")],
        dataset=rows,
        rubric=vf.Rubric([_sum_reward]),
        max_turns=2,
    )
    calls = [[{"name": "kv_get", "arguments": {"key": "secret"}}], None]
    out = env.evaluate_sync(vf.ScriptedClient(["", "done"], tool_calls=calls), "scripted")
    # Each rollout reads its own secret back (a shared store would hold one value for all three).
    assert sorted(tool_texts(r)[0] for r in out.rows) == ["secret-0", "secret-1", "secret-2"]
    assert [r["reward"] for r in out.rows] == [1.0, 1.0, 1.0]


def test_bad_server_configs_are_errors_before_any_rollout() -> None:
    with pytest.raises(ValueError, match="lifetime must be one of shared, rollout"):
        vf.MCPStdioServer(command="python", lifetime="forever")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="url must be an http"):
        vf.MCPHTTPServer(url="127.0.0.1:8000/mcp")
    with pytest.raises(TypeError, match=r"mcp_servers\[0\] is a str"):
        vf.ToolEnv(mcp_servers=["python -m server"], dataset=[{"question": "q", "answer": ""}])  # type: ignore[list-item]
    with pytest.raises(
        vf.ToolServerError,
        match="MCP server 'nothing-here' could not be started: FileNotFoundError",
    ):
        vf.ToolEnv(
            mcp_servers=[vf.MCPStdioServer(command="/no/such/mcp-server", name="nothing-here")],
            dataset=[{"question": "q", "answer": ""}],
        )


def test_a_tool_name_offered_twice_is_refused_unless_prefixed() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    with pytest.raises(
        ValueError, match="'add' is offered by a Python tool and by MCP server 'example'"
    ):
        vf.ToolEnv(
            tools=[add],
            mcp_servers=[tagged_server(new_tag(), faults=False)],
            dataset=[{"question": "q", "answer": ""}],
        )
    server = tagged_server(new_tag(), faults=False)
    prefixed = vf.MCPStdioServer(
        command=server.command, args=server.args, env=server.env, tool_prefix="mcp_"
    )
    env = vf.ToolEnv(tools=[add], mcp_servers=[prefixed], dataset=[{"question": "q", "answer": ""}])
    names = [d["function"]["name"] for d in env.tool_defs]
    assert names == ["add", "mcp_calculator", "mcp_add", "mcp_kv_set", "mcp_kv_get", "mcp_kv_incr"]


async def test_outside_a_run_a_shared_server_lives_until_aclose_and_a_pickled_copy_opens_its_own() -> (
    None
):
    tag = new_tag()
    env = await asyncio.to_thread(
        vf.ToolEnv,
        mcp_servers=[tagged_server(tag)],
        dataset=[{"question": "q", "answer": ""}],
        max_turns=2,
    )
    client = vf.ScriptedClient(
        ["", "done"], tool_calls=[[{"name": "kv_incr", "arguments": {"key": "n"}}], None]
    )
    (inp,) = env.get_eval_dataset()
    rows = [await env.run_rollout(inp, client, "scripted") for _ in range(2)]
    assert [tool_texts(r) for r in rows] == [["1"], ["2"]]  # no run: one server for both
    assert len(server_processes(tag=tag)) == 1
    copy = pickle.loads(pickle.dumps(env))  # what RayExecutor ships for a hand-built environment
    assert tool_texts(await copy.run_rollout(inp, client, "scripted")) == ["1"]  # its own server
    assert len(server_processes(tag=tag)) == 2
    await copy.aclose()
    await env.aclose()
    assert server_processes(tag=tag) == []
