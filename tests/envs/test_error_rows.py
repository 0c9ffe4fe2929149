"""Error rows that tell the truth: the right category and text, what a failed rollout did, every
model turn seen by the environment, hints for code ported from verifiers, tool arguments decoded once."""

from __future__ import annotations

from typing import Any

import pytest

import verifiers_lite as vf
from verifiers_lite.core.errors import categorize
from verifiers_lite.core.messages import Messages
from verifiers_lite.core.model_client import ChatResponse, TurnUsage
from verifiers_lite.core.state import State
from verifiers_lite.tools.functions import call_tool


class RaisingRollout(vf.SingleTurnEnv):
    """Asks the model once, then raises ``exc`` from environment code."""

    def __init__(self, exc: BaseException, **kw: Any) -> None:
        super().__init__(dataset=[{"question": "a b"}], **kw)
        self.exc = exc

    async def rollout(self, input, client, model, sampling_args=None) -> State:
        await super().rollout(input, client, model, sampling_args)
        raise self.exc


@pytest.mark.parametrize(
    "exc, message",
    [
        (TimeoutError(), "TimeoutError (raised without a message)"),
        (TimeoutError("sandbox took too long"), "TimeoutError: sandbox took too long"),
    ],
)
def test_timeout_raised_by_environment_code_is_env_error_with_its_text(fake_server, exc, message):
    out = RaisingRollout(exc).evaluate_sync(fake_server.base_url, "fake-echo", progress=False)
    error = out.rows[0]["error"]
    assert (error["category"], error["message"]) == ("env_error", message)
    assert "in rollout\n    raise self.exc" in error["traceback"]  # where the environment raised


class TimingOutClient:
    async def chat(self, model, messages, sampling_args=None, tools=None) -> ChatResponse:
        raise TimeoutError


def test_a_model_call_that_times_out_is_model_timeout():
    env = vf.SingleTurnEnv(dataset=[{"question": "a"}])
    err = env.evaluate_sync(TimingOutClient(), "m", progress=False).rows[0]["error"]
    assert err["category"] == "model_timeout" and "model call timed out" in err["message"]
    assert "TimeoutError: TimeoutError" not in err["message"]


class FailsOnSecondEnvTurn(vf.MultiTurnEnv):
    async def env_response(self, messages: Messages, state: State) -> Messages:
        if state["turns"] == 2:
            raise RuntimeError("game server lost")
        return [{"role": "user", "content": "d e"}]


def test_failed_multiturn_rollout_keeps_its_partial_trajectory_usage_and_timing(fake_server):
    env = FailsOnSecondEnvTurn(dataset=[{"question": "a b c"}], max_turns=5)
    row = env.evaluate_sync(fake_server.base_url, "fake-echo", progress=False).rows[0]
    error = row["error"]
    assert (error["category"], error["message"]) == ("env_error", "RuntimeError: game server lost")
    assert 'raise RuntimeError("game server lost")' in error["traceback"]
    assert row["stop_reason"] == "error" and row["turns"] == 2
    assert row["completion"] == [
        {"role": "assistant", "content": "a b c"},
        {"role": "user", "content": "d e"},
        {"role": "assistant", "content": "d e"},
    ]
    # The fake server counts words: prompts of 3 then 3+3+2 words; replies of 3 and 2 words, +1 each.
    assert row["usage"] == {"prompt_tokens": 3 + 8, "completion_tokens": 4 + 3}
    assert fake_server.stats()["requests"] == 2
    assert (
        row["timing"]["generation_ms"] > 0
        and row["timing"]["total_ms"] >= row["timing"]["generation_ms"]
    )


class CountsTurns(vf.MultiTurnEnv):
    async def is_completed(self, messages: Messages, state: State) -> bool:
        state["seen"] = state.get("seen", 0) + 1
        return False

    async def env_response(self, messages: Messages, state: State) -> Messages:
        return [{"role": "user", "content": "go on"}]


@pytest.mark.parametrize(
    "model, max_turns, turns, stop",
    [
        ("fake-length", 4, 1, "length"),  # a truncated first turn ends the rollout: still seen
        ("fake-echo", 3, 3, "max_turns"),
    ],
)
def test_every_model_turn_is_seen_by_is_completed(fake_server, model, max_turns, turns, stop):
    env = CountsTurns(
        dataset=[{"question": "hi"}],
        max_turns=max_turns,
        rubric=vf.Rubric([lambda state: float(state.get("seen", 0))]),
    )
    row = env.evaluate_sync(fake_server.base_url, model, progress=False).rows[0]
    assert (row["turns"], row["stop_reason"], row["reward"]) == (turns, stop, float(turns))


class PortedFromVerifiers(vf.Environment):
    async def rollout(self, input, client, model, sampling_args=None) -> State:
        state = self.init_state(input, model, sampling_args)
        await client.chat.completions.create(model=model, messages=state["prompt"])
        return state


@pytest.mark.parametrize("kind", ["base_url", "openai"])
def test_rollout_calling_openai_api_gets_an_error_naming_get_model_response(fake_server, kind):
    if kind == "openai":
        openai = pytest.importorskip("openai")
        client: Any = openai.AsyncOpenAI(base_url=fake_server.base_url, api_key="x")
    else:
        client = fake_server.base_url
    env = PortedFromVerifiers(dataset=[{"question": "a"}])
    err = env.evaluate_sync(client, "fake-echo", progress=False).rows[0]["error"]
    assert err["category"] == "env_error"
    assert "has no attribute 'completions'" in err["message"]
    assert "self.get_model_response(client, model, messages, state)" in err["message"]


def test_attribute_errors_elsewhere_get_no_hint():
    msg = categorize(AttributeError("'dict' object has no attribute 'completions'"))["message"]
    assert "get_model_response" not in msg


# -- tool arguments decoded once -----------------------------------------------------------------


def addition(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class ToolCaller:
    """First turn: calls ``addition`` with ``arguments`` verbatim; then answers "done"."""

    def __init__(self, arguments: str) -> None:
        self.arguments = arguments

    async def chat(self, model, messages, sampling_args=None, tools=None) -> ChatResponse:
        if messages[-1]["role"] == "tool":
            return ChatResponse({"role": "assistant", "content": "done"}, "stop", TurnUsage())
        call = {
            "id": "c1",
            "type": "function",
            "function": {"name": "addition", "arguments": self.arguments},
        }
        return ChatResponse(
            {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls", TurnUsage()
        )


@pytest.mark.parametrize(
    "arguments, expected",
    [
        (
            '"addition"',
            "Error (bad_arguments) calling tool 'addition': arguments must be a JSON object, got str",
        ),
        (
            "[1, 2]",
            "Error (bad_arguments) calling tool 'addition': arguments must be a JSON object, got list",
        ),
        (
            "{not json",
            "Error (bad_arguments) calling tool 'addition': arguments are not valid JSON",
        ),
        ('{"a": 2, "b": 3}', "5"),
    ],
)
def test_tool_env_decodes_arguments_once(arguments, expected):
    env = vf.ToolEnv(tools=[addition], dataset=[{"question": "add"}], max_turns=3)
    row = env.evaluate_sync(ToolCaller(arguments), "m", progress=False).rows[0]
    tool_msgs = [m for m in row["completion"] if m["role"] == "tool"]
    assert len(tool_msgs) == 1 and tool_msgs[0]["content"].startswith(expected)
    assert row["error"] is None and row["stop_reason"] == "stop"


async def test_call_tool_takes_blank_arguments_as_no_arguments():
    def ping() -> str:
        return "pong"

    assert await call_tool(ping, "  ") == "pong"
