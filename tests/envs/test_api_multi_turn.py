"""APIMultiTurnRollout: scripted API for the logic, the fake HTTP server for OpenAIChatAPI, a real
llama.cpp server end to end."""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import inspect
import json
import subprocess
import sys
import threading
import time

import pytest

from verifiers_lite.clients import OpenAIChatAPI
from verifiers_lite.envs import APIMultiTurnRollout
from verifiers_lite.rollout import SamplingParams, ToolManager
from verifiers_lite.rollout.trajectory import STOP_REASONS, is_truncated
from verifiers_lite.testing.fake_server import free_port
from verifiers_lite.testing.waiting import wait_until


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class FakeAPI:
    """Scripted chat API: ``script(messages) -> (message, finish_reason)``; counts concurrency."""

    def __init__(self, script, delay: float = 0.0) -> None:
        self.script = script
        self.delay = delay
        self.lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0
        self.requests: list[dict] = []

    def chat(self, messages, tools, params, extra_body):
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            self.requests.append(
                {
                    "messages": copy.deepcopy(messages),
                    "tools": tools,
                    "params": params,
                    "extra_body": extra_body,
                }
            )
        try:
            time.sleep(self.delay)
            return self.script(messages)
        finally:
            with self.lock:
                self.in_flight -= 1


def native_call(messages):
    q = messages[0]["content"]
    if q == "boom":
        raise ConnectionError("server gone")
    if q == "long":
        return {"role": "assistant", "content": "cut"}, "length"
    n_tool = sum(m["role"] == "tool" for m in messages)
    if q == "loop" or n_tool == 0:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"x{n_tool}",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
                }
            ],
        }, "tool_calls"
    return {"role": "assistant", "content": f"= {messages[-1]['content']}"}, "stop"


def test_stop_reasons_and_failures_are_per_trajectory() -> None:
    api = FakeAPI(native_call)
    rollout = APIMultiTurnRollout(
        api,
        ToolManager([add]),
        SamplingParams(temperature=0.3, max_tokens=50),
        max_turns=3,
        extra_body={"top_k": 5},
    )
    inp = [
        {"messages": [{"role": "user", "content": q}], "q": q}
        for q in ["ok", "boom", "long", "loop"]
    ]
    before = copy.deepcopy(inp)
    out = rollout(inp)
    assert inp == before
    assert [t["q"] for t in out] == ["ok", "boom", "long", "loop"]  # input keys kept, in order
    assert [t["stop_reason"] for t in out] == ["stop", "error", "length", "max_turns"]
    assert [t["turns"] for t in out] == [2, 0, 1, 3]
    for t in out:
        assert t["stop_reason"] in STOP_REASONS and t["truncated"] == is_truncated(t["stop_reason"])
    # The whole "ok" conversation, written out by hand.
    assert out[0]["messages"] == [
        {"role": "user", "content": "ok"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "x0",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "x0", "name": "add", "content": "3"},
        {"role": "assistant", "content": "= 3"},
    ]
    assert [t["error"] for t in out if t["stop_reason"] != "error"] == [None] * 3
    # A failed API call is the core's categorised record, not a string.
    assert out[1]["error"]["category"] == "model_connection"
    assert "ConnectionError: server gone" in out[1]["error"]["message"]
    assert out[1]["messages"] == [{"role": "user", "content": "boom"}]
    r = api.requests[0]
    assert r["params"]["temperature"] == 0.3 and r["params"]["max_tokens"] == 50
    assert r["extra_body"] == {"top_k": 5} and r["tools"][0]["function"]["name"] == "add"


def test_max_turns_counted_by_hand() -> None:
    """The max_turns-th model turn ends the rollout before its tool calls run (MultiTurnEnv's
    rule): with max_turns=3 a model that always calls a tool makes 3 requests, 2 tool runs."""
    runs: list[int] = []

    def count(n: int) -> int:
        """Count a call."""
        runs.append(n)
        return len(runs)

    def always_call(messages):
        k = sum(m["role"] == "assistant" for m in messages)  # this turn's index, from 0
        return {
            "role": "assistant",
            "content": f"turn {k + 1}",
            "tool_calls": [
                {
                    "id": f"c{k}",
                    "type": "function",
                    "function": {"name": "count", "arguments": f'{{"n": {k}}}'},
                }
            ],
        }, "tool_calls"

    api = FakeAPI(always_call)
    (t,) = APIMultiTurnRollout(api, ToolManager([count]), max_turns=3)(
        [[{"role": "user", "content": "go"}]]
    )

    def turn(k: int) -> dict:
        return {
            "role": "assistant",
            "content": f"turn {k + 1}",
            "tool_calls": [
                {
                    "id": f"c{k}",
                    "type": "function",
                    "function": {"name": "count", "arguments": f'{{"n": {k}}}'},
                }
            ],
        }

    assert t["messages"] == [
        {"role": "user", "content": "go"},
        turn(0),
        {"role": "tool", "tool_call_id": "c0", "name": "count", "content": "1"},
        turn(1),
        {"role": "tool", "tool_call_id": "c1", "name": "count", "content": "2"},
        turn(2),  # the third turn's call is not run
    ]
    assert (t["turns"], t["stop_reason"], t["truncated"]) == (3, "max_turns", True)
    assert runs == [0, 1] and len(api.requests) == 3
    # Each request carried the conversation so far: 1, 3 and 5 messages.
    assert [len(r["messages"]) for r in api.requests] == [1, 3, 5]


def test_tool_that_raises_is_answered_and_listed() -> None:
    def broken(x: int) -> int:
        """Always fails."""
        raise RuntimeError("tool exploded")

    def script(messages):
        if messages[-1]["role"] == "user":
            return {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "b0",
                        "type": "function",
                        "function": {"name": "broken", "arguments": '{"x": 1}'},
                    }
                ],
            }, "tool_calls"
        return {"role": "assistant", "content": "gave up"}, "stop"

    (t,) = APIMultiTurnRollout(FakeAPI(script), ToolManager([broken]))(
        [[{"role": "user", "content": "q"}]]
    )
    assert (t["stop_reason"], t["turns"], t["error"]) == ("stop", 2, None)
    tool_msg = t["messages"][2]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "b0"
    assert "tool exploded" in tool_msg["content"]
    (failed,) = t["tool_errors"]
    where, key = failed.pop("traceback"), failed.pop("traceback_id")
    assert key == hashlib.sha256(where.encode()).hexdigest()[:16]  # the key a run stores it under
    assert failed == {"turn": 1, "tool_call_id": "b0", "name": "broken", "error": "exception"}
    # where the tool raised: this file, the raise's line (counted apart, with inspect)
    lines, first = inspect.getsourcelines(broken)
    line = first + next(i for i, text in enumerate(lines) if "raise RuntimeError" in text)
    assert f'File "{__file__}", line {line}, in broken' in where
    assert where.endswith("RuntimeError: tool exploded") and "traceback" not in tool_msg


def test_tool_calls_without_a_tool_manager_are_an_env_error() -> None:
    (t,) = APIMultiTurnRollout(FakeAPI(native_call))([[{"role": "user", "content": "ok"}]])
    assert t["stop_reason"] == "error" and t["turns"] == 1
    assert t["error"]["category"] == "env_error"
    assert "no ToolManager" in t["error"]["message"]


def test_hermes_calls_in_text_and_tool_errors() -> None:
    def script(messages):
        if messages[-1]["role"] == "user":
            return {
                "role": "assistant",
                "content": '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>',
            }, "stop"
        return {"role": "assistant", "content": "sorry"}, "stop"

    (t,) = APIMultiTurnRollout(FakeAPI(script), ToolManager([add]))(
        [[{"role": "user", "content": "q"}]]
    )
    assert t["turns"] == 2 and t["stop_reason"] == "stop"
    assert t["messages"][1]["tool_calls"][0]["id"] == "call_1_0"
    assert t["tool_errors"][0]["error"] == "bad_arguments"


def test_async_chat_api() -> None:
    class AsyncAPI:
        async def chat(self, messages, tools, params, extra_body):
            return {"role": "assistant", "content": f"echo {messages[-1]['content']}"}, "stop"

    out = APIMultiTurnRollout(AsyncAPI())([[{"role": "user", "content": str(i)}] for i in range(3)])
    assert [t["messages"][-1]["content"] for t in out] == ["echo 0", "echo 1", "echo 2"]


def test_concurrency_bounds_trajectories_in_flight() -> None:
    """Four calls must be in flight together (each waits for the fourth), never a fifth."""
    all_in = threading.Event()

    class GatedAPI(FakeAPI):
        def chat(self, messages, tools, params, extra_body):
            with self.lock:
                if self.in_flight + 1 == 4:
                    all_in.set()
            return super().chat(messages, tools, params, extra_body)

    def script(messages):
        assert all_in.wait(60), "four calls were never in flight together"
        return {"role": "assistant", "content": "hi"}, "stop"

    api = GatedAPI(script)
    out = APIMultiTurnRollout(api, concurrency=4)(
        [[{"role": "user", "content": str(i)}] for i in range(12)]
    )
    assert [t["stop_reason"] for t in out] == ["stop"] * 12 and api.peak == 4


def test_bad_messages_are_refused_before_any_call() -> None:
    api = FakeAPI(native_call)
    with pytest.raises(ValueError, match="trajectory 1.*role"):
        APIMultiTurnRollout(api)([[{"role": "user", "content": "a"}], [{"content": "no role"}]])
    assert api.requests == []


def test_traces(tmp_path) -> None:
    api = FakeAPI(native_call)
    APIMultiTurnRollout(api, ToolManager([add]), trace_dir=tmp_path)(
        [[{"role": "user", "content": "ok"}]] * 3 + [[{"role": "user", "content": "boom"}]]
    )
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(set(names)) == 4 and sum(n.startswith("ok-") for n in names) == 3
    fail = json.loads((tmp_path / [n for n in names if n.startswith("fail-")][0]).read_text())
    assert fail["stop_reason"] == "error" and fail["error"]["category"] == "model_connection"


def calculator(expression: str) -> str:
    """Evaluate a sum of two integers."""
    a, b = expression.split("+")
    return str(int(a) + int(b))


def test_openai_chat_api_on_the_fake_server(fake_server) -> None:
    """OpenAIChatAPI against a real HTTP server: the fake-tool model calls the calculator, then
    answers with its result; a 500 is the core's model_http_error."""
    api = OpenAIChatAPI("fake-tool", base_url=fake_server.base_url, max_retries=0, timeout=30)
    rollout = APIMultiTurnRollout(api, ToolManager([calculator]), max_turns=4)
    (t,) = rollout([[{"role": "user", "content": "What is 3 + 4?"}]])
    assert t["error"] is None, t["error"]
    assert t["messages"] == [
        {"role": "user", "content": "What is 3 + 4?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "calculator", "arguments": '{"expression": "3 + 4"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "name": "calculator", "content": "7"},
        {"role": "assistant", "content": "The calculator says \\boxed{7}."},
    ]
    assert (t["turns"], t["stop_reason"]) == (2, "stop")

    fake_server.configure(faults=[{"status": 500}])
    (t,) = rollout([[{"role": "user", "content": "What is 3 + 4?"}]])
    assert (t["stop_reason"], t["turns"]) == ("error", 0)
    assert t["error"]["category"] == "model_http_error" and "HTTP 500" in t["error"]["message"]


def test_openai_chat_api_retries_through_the_retry_policy(fake_server) -> None:
    """max_retries=1: one 500 is retried (by the library's RetryPolicy), the rollout succeeds."""
    api = OpenAIChatAPI("fake-echo", base_url=fake_server.base_url, max_retries=1, timeout=30)
    fake_server.configure(faults=[{"status": 500}])
    (t,) = APIMultiTurnRollout(api)([[{"role": "user", "content": "hello"}]])
    assert t["error"] is None and t["messages"][-1]["content"] == "hello"
    assert fake_server.stats()["requests"] == 2


def test_openai_chat_api_with_the_callers_own_client(fake_server) -> None:
    """A caller's sync OpenAI client is called as it is (in a worker thread); its errors are
    mapped onto the core's categories like the SDK adapter's."""
    import openai

    client = openai.OpenAI(base_url=fake_server.base_url, api_key="k", max_retries=0, timeout=30)
    rollout = APIMultiTurnRollout(OpenAIChatAPI("fake-echo", client=client))
    (ok,) = rollout([[{"role": "user", "content": "hello"}]])
    assert ok["error"] is None and ok["messages"][-1] == {"role": "assistant", "content": "hello"}
    fake_server.configure(faults=[{"status": 500}])
    (failed,) = rollout([[{"role": "user", "content": "hello"}]])
    assert failed["stop_reason"] == "error" and failed["error"]["category"] == "model_http_error"
    assert fake_server.stats()["by_status"] == {"200": 1, "500": 1}


@pytest.mark.local_model
@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None,
    reason="llama_cpp not importable: pip install 'verifiers_lite[local]'",
)
def test_real_llama_cpp_server() -> None:
    pytest.importorskip("uvicorn", reason="llama-cpp-python[server] extras missing")
    from verifiers_lite.local import smollm2_gguf_path

    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(smollm2_gguf_path()),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "1024",
            "--n_threads",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        api = OpenAIChatAPI(
            "smollm2", base_url=f"http://127.0.0.1:{port}/v1", timeout=600, max_retries=0
        )

        def serving() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"the model server exited with {proc.returncode}")
            try:
                api.client.models.list()
            except Exception:
                return False
            return True

        # a loaded 2-core machine loads the model slowly
        wait_until(serving, "the model server answers", timeout=300, interval=0.5)
        rollout = APIMultiTurnRollout(
            api,
            ToolManager([add]),
            SamplingParams(temperature=0.0, max_tokens=24),
            max_turns=2,
            concurrency=2,
        )
        out = rollout(
            [[{"role": "user", "content": f"What is {i}+2? Use the add tool."}] for i in range(3)]
        )
        for t in out:
            assert t["stop_reason"] in {"stop", "length", "max_turns"}, t.get("error")
            assert 1 <= t["turns"] <= 2
            assert t["messages"][1]["role"] == "assistant"
    finally:
        proc.terminate()
        proc.wait(10)
