"""VLLMServerSampler over real HTTP on 127.0.0.1 against a small vLLM-shaped completions server.

The server answers like vLLM's ``/v1/completions`` with ``return_token_ids``: the token ids of
"ok" + end-of-turn in the toy tokenizer and one known logprob per token, so the rollout and the
training batch can be checked against hand-computed values. The real vLLM server is exercised
in ``test_vllm_http.py`` (.venv-vllm).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.rollout.rollout_invariants import check_trajectory
from verifiers_lite.clients.http import parse_chat_completion
from verifiers_lite.core.errors import ModelAPIError
from verifiers_lite.rollout import (
    MultiTurnRollout,
    SamplingParams,
    VLLMServerSampler,
    build_training_batch,
)
from verifiers_lite.rollout.samplers.vllm_server import parse_completion
from verifiers_lite.rollout.testing import toy_template

TEMPLATE = toy_template()
ANSWER = TEMPLATE.encode("ok") + [2]


def lp(tok: int) -> float:
    return -((tok % 5) + 1) / 8


class Handler(BaseHTTPRequestHandler):
    bodies: list[dict[str, Any]] = []

    def log_message(self, *args: Any) -> None:  # keep pytest output clean
        pass

    def _send(self, code: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(200, {"data": [{"id": "toy", "max_model_len": 100}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.bodies.append(body)
        if "boom" in TEMPLATE.decode(body["prompt"]):
            self._send(400, {"error": {"message": "bad prompt"}})
            return
        ids = ANSWER[: body["max_tokens"]]
        choice: dict[str, Any] = {
            "text": TEMPLATE.decode(ids),
            "token_ids": ids,
            "finish_reason": "stop" if len(ids) == len(ANSWER) else "length",
        }
        if body.get("logprobs") is not None:
            choice["logprobs"] = {
                "tokens": [f"token_id:{t}" for t in ids],
                "token_logprobs": [lp(t) for t in ids],
                "top_logprobs": [{f"token_id:{t}": lp(t), "token_id:7": -9.0} for t in ids],
            }
        self._send(200, {"object": "text_completion", "choices": [choice]})


@pytest.fixture()
def server() -> Iterator[str]:
    Handler.bodies = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_rollout_over_http_keeps_ids_and_logprobs(server: str) -> None:
    sampler = VLLMServerSampler(server, "toy")
    assert sampler.max_context_tokens == 100
    rollout = MultiTurnRollout(
        sampler, TEMPLATE, sampling_params=SamplingParams(logprobs=1, seed=4, max_tokens=50)
    )
    convs = [[{"role": "user", "content": q}] for q in ("hi", "boom", "x" * 120)]
    ok, failed, too_long = rollout(convs)
    assert ok["stop_reason"] == "stop" and ok["messages"][-1]["content"] == "ok"
    check_trajectory(ok, TEMPLATE)
    # The server's 400 is the model endpoint's failure, its own message kept.
    assert failed["stop_reason"] == "error" and failed["error"]["category"] == "model_http_error"
    assert "HTTP 400" in failed["error"]["message"] and "bad prompt" in failed["error"]["message"]
    assert failed["error"]["message"].startswith("sampler failed: ModelAPIError: ")
    assert too_long["stop_reason"] == "error" and too_long["error"]["category"] == "prompt_too_long"
    assert "sampler context=100" in too_long["error"]["message"]
    # The request: the exact prompt ids, token ids and logprobs asked for, room capped.
    body = next(b for b in Handler.bodies if "boom" not in TEMPLATE.decode(b["prompt"]))
    assert body["prompt"] == ok["prompt_ids"] and len(ok["prompt_ids"]) == ok["prompt_length"]
    assert body["return_token_ids"] is True and body["logprobs"] == 1 and body["seed"] == 4
    assert body["stop_token_ids"] == [2] and body["max_tokens"] == 50
    batch = build_training_batch([ok])
    trained = [
        (t, x)
        for t, x, lab in zip(
            *(batch[k][0] for k in ("input_ids", "logprobs", "labels")), strict=True
        )
        if lab != -100
    ]
    assert trained == [(t, lp(t)) for t in ANSWER]


def test_failures_are_model_errors_with_their_category(server: str) -> None:
    with pytest.raises(ModelAPIError) as bad:
        parse_completion({"object": "text_completion", "choices": []}, None)
    assert bad.value.category == "model_bad_response"
    with pytest.raises(ModelAPIError) as refused:
        VLLMServerSampler(server, "toy").sample([TEMPLATE.encode("boom")], SamplingParams())
    assert (refused.value.category, refused.value.status) == ("model_http_error", 400)
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    with pytest.raises(ModelAPIError) as gone:
        VLLMServerSampler(f"http://127.0.0.1:{port}/v1", "toy").sample([[5, 6]], SamplingParams())
    assert gone.value.category == "model_connection"


def test_top_logprobs_and_length(server: str) -> None:
    sampler = VLLMServerSampler(server, "toy")
    prompt = TEMPLATE.encode_messages([{"role": "user", "content": "hi"}])
    (res,) = sampler.sample([prompt], SamplingParams(max_tokens=2, logprobs=2))
    assert res.token_ids == ANSWER[:2] and res.finish_reason == "length"
    assert res.top_logprobs == [{t: lp(t), 7: -9.0} for t in ANSWER[:2]]
    (res,) = sampler.sample([prompt], SamplingParams(max_tokens=5))
    assert res.logprobs is None and "logprobs" not in Handler.bodies[-1]


def test_parse_chat_completion_keeps_vllm_token_ids() -> None:
    body = {
        "prompt_token_ids": [1, 2, 3],
        "choices": [
            {
                "message": {"role": "assistant", "content": "hi"},
                "finish_reason": "stop",
                "token_ids": [9, 8],
                "logprobs": {"content": [{"logprob": -0.5}, {"logprob": -0.25}]},
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }
    r = parse_chat_completion(json.dumps(body))
    assert (r.prompt_ids, r.completion_ids, r.completion_logprobs) == (
        [1, 2, 3],
        [9, 8],
        [-0.5, -0.25],
    )
    del body["choices"][0]["token_ids"]  # a server that gives no ids: none invented
    r = parse_chat_completion(json.dumps(body))
    assert r.prompt_ids is None and r.completion_ids is None
