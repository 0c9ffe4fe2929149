"""APIMultiTurnRollout: scripted API for the logic, a real llama.cpp server end to end."""

from __future__ import annotations

import copy
import importlib.util
import json
import socket
import subprocess
import sys
import threading
import time

import pytest

from verifiers_lite.rollout import APIMultiTurnRollout, SamplingParams, ToolManager
from verifiers_lite.rollout.trajectory import STOP_REASONS, is_truncated


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
    assert [t["stop_reason"] for t in out] == ["stop", "error", "length", "max_turns"]
    assert [t["turns"] for t in out] == [2, 0, 1, 3]
    for t in out:
        assert t["stop_reason"] in STOP_REASONS and t["truncated"] == is_truncated(t["stop_reason"])
    assert out[0]["messages"][-1]["content"] == "= 3"
    assert out[0]["messages"][2] == {
        "role": "tool",
        "tool_call_id": "x0",
        "name": "add",
        "content": "3",
    }
    assert "ConnectionError: server gone" in out[1]["error"]
    # Every call answered, with its id, also at max_turns.
    loop = out[3]["messages"]
    ids = [c["id"] for m in loop if m["role"] == "assistant" for c in m["tool_calls"]]
    assert ids == [m["tool_call_id"] for m in loop if m["role"] == "tool"]
    r = api.requests[0]
    assert r["params"]["temperature"] == 0.3 and r["params"]["max_tokens"] == 50
    assert r["extra_body"] == {"top_k": 5} and r["tools"][0]["function"]["name"] == "add"


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


def test_thread_pool_concurrency() -> None:
    api = FakeAPI(lambda m: ({"role": "assistant", "content": "hi"}, "stop"), delay=0.05)
    t0 = time.perf_counter()
    out = APIMultiTurnRollout(api, concurrency=4)(
        [[{"role": "user", "content": str(i)}] for i in range(12)]
    )
    assert len(out) == 12 and api.peak == 4
    assert time.perf_counter() - t0 < 0.5  # 3 waves of 0.05 s, not 12


def test_traces(tmp_path) -> None:
    api = FakeAPI(native_call)
    APIMultiTurnRollout(api, ToolManager([add]), trace_dir=tmp_path)(
        [[{"role": "user", "content": "ok"}]] * 3 + [[{"role": "user", "content": "boom"}]]
    )
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(set(names)) == 4 and sum(n.startswith("ok-") for n in names) == 3
    assert (
        json.loads((tmp_path / [n for n in names if n.startswith("fail-")][0]).read_text())[
            "stop_reason"
        ]
        == "error"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.local_model
@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None,
    reason="llama_cpp not importable: pip install 'verifiers_lite[local]'",
)
def test_real_llama_cpp_server() -> None:
    pytest.importorskip("uvicorn", reason="llama-cpp-python[server] extras missing")
    from verifiers_lite.rollout import OpenAIChatAPI, smollm2_gguf_path

    port = _free_port()
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
        deadline = time.time() + 300  # a loaded 2-core machine loads the model slowly
        while True:
            try:
                api.client.models.list()
                break
            except Exception:
                if time.time() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.5)
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
