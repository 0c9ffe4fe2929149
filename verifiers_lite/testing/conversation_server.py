"""Serves :mod:`verifiers_lite.testing.conversation_model` as an OpenAI-compatible endpoint.

Routes: ``POST /v1/chat/completions``, ``POST /v1/completions``, ``GET /v1/models``,
``GET /health``, ``GET /_control/stats`` (requests answered). Raw ASGI under uvicorn, loopback
only; :class:`ConversationServerProcess` runs it in a child process.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from verifiers_lite.testing.conversation_model import (
    MODEL,
    answer_chat,
    answer_text,
    apply_stop,
    text_of,
)
from verifiers_lite.testing.fake_server import _json
from verifiers_lite.testing.server_process import ServerProcess, request_body, serve


def _usage(prompt: str, completion: str) -> dict[str, int]:
    p, c = len(prompt.split()), len(completion.split()) + 1
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def chat_response(req: dict[str, Any], number: int) -> dict[str, Any]:
    """The ``chat.completion`` body for request ``req``."""
    message = answer_chat(req["messages"], req.get("tools"))
    if message.get("content") is not None:
        message["content"] = apply_stop(message["content"], req.get("stop"))
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    prompt = " ".join(text_of(m.get("content")) for m in req["messages"])
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": req.get("model", MODEL),
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": _usage(prompt, str(message.get("content") or "")),
    }


def completion_response(req: dict[str, Any], number: int) -> dict[str, Any]:
    """The ``text_completion`` body for request ``req`` (a string prompt)."""
    prompt = req["prompt"] if isinstance(req["prompt"], str) else "".join(req["prompt"])
    text = apply_stop(answer_text(prompt), req.get("stop"))
    return {
        "id": f"cmpl-{number}",
        "object": "text_completion",
        "created": 0,
        "model": req.get("model", MODEL),
        "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}],
        "usage": _usage(prompt, text),
    }


class ConversationServer:
    """The ASGI app."""

    def __init__(self) -> None:
        self.requests = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = await request_body(scope, receive, send)
        if body is None:
            return
        await self._route(scope["path"], scope["method"], body, send)

    async def _route(self, path: str, method: str, body: bytes, send: Any) -> None:
        answer = {"/chat/completions": chat_response, "/completions": completion_response}
        route = next((r for r in answer if path.endswith(r)), None)
        if route is not None and method == "POST":
            self.requests += 1
            try:
                payload = answer[route](json.loads(body), self.requests)
            except (ValueError, KeyError, TypeError) as exc:
                await _json(send, 400, {"error": {"message": f"bad request: {exc!r}"}})
                return
            await _json(send, 200, payload)
        elif path in ("/health", "/v1/models"):
            await _json(
                send,
                200,
                {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "test"}]},
            )
        elif path == "/_control/stats":
            await _json(send, 200, {"requests": self.requests})
        else:
            await _json(send, 404, {"error": {"message": f"no route {method} {path}"}})


class ConversationServerProcess(ServerProcess):
    """The server in a child process on 127.0.0.1; a context manager that always stops it."""

    module = "verifiers_lite.testing.conversation_server"
    name = "conversation server"

    def stats(self) -> dict[str, Any]:
        return dict(self.request_json("/_control/stats"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="deterministic conversation model server (loopback only)"
    )
    parser.add_argument("--port", type=int, default=8012)
    args = parser.parse_args(argv)
    serve(ConversationServer(), args.port)


if __name__ == "__main__":
    main()
