"""A deterministic fake OpenAI-compatible chat server for tests and benchmarks (loopback only).

Raw ASGI under uvicorn, so the server itself is cheap next to the client being measured.
Behaviour is chosen by the request's ``model``:

- ``fake-arith`` (default): finds ``A op B`` in the last user message and answers
  ``\\boxed{result}``, right or wrong by a hash of the request (temperature 0: of the messages
  only, so a rerun or a remote run gets the same answers; otherwise a counter varies it);
- ``fake-echo``: repeats the last user message;
- ``fake-tool``: first calls the ``calculator`` tool on the expression, then answers with the
  tool's result in ``\\boxed{}``;
- ``fake-guess``: plays the guess-the-number game by bisection on "higher"/"lower" feedback;
- ``fake-length``: answers with ``finish_reason="length"``;
- ``fake-think``: a thinking model: like ``fake-tool`` when the request offers a ``calculator``
  tool (calls it, then answers the tool's result in ``\\boxed{}``), else it answers the right
  value at once; each turn with its reasoning in ``reasoning_content`` (a first guess in its own
  ``\\boxed{}``, one more than the truth, which only the reasoning holds) and
  ``usage.completion_tokens_details.reasoning_tokens``; ``fake-think-reasoning``
  the same under the field name ``reasoning``; ``fake-think-inline`` the same written inline,
  ``<think>…</think>`` before the content;
- ``fake-vision``: names the dominant colour of each image of the last user message
  (``image_url`` parts holding a PNG data URI, decoded here; the figure's colour, not the
  background's: a red circle on white is red): "The image is red.";
- ``fake-text-only``: like a server whose chat template joins strings: any message whose
  content is a list of parts is answered HTTP 500 with one fixed body ("can only concatenate
  str (not \"list\") to str"); otherwise it repeats the last user message.

``GET /v1/models`` lists every one of these (``models=`` / ``--models`` lists a subset, e.g. one,
like a vLLM or llama.cpp server). Any other model name is answered HTTP 404, as vLLM answers
a model it does not serve.

``POST /v1/responses`` gives the same answers in the Responses API's dialect, and either route
streams (server-sent events) when the request asks ``"stream": true``; bodies and events are
written by :mod:`verifiers_lite.clients.openai_wire`.

Control endpoints: ``POST /_control/config``
({latency_ms, faults: [...], correct_rate, system_fingerprint, created, cached_tokens,
usage_extra, served_as}; a system_fingerprint is then returned with every completion, ``created``
fixes every completion's creation time, ``cached_tokens`` of each prompt's tokens are reported as
served from a prompt cache (``usage.prompt_tokens_details.cached_tokens``, capped at its prompt
tokens), ``usage_extra`` is merged into every completion's ``usage``, as a provider's own
fields, and ``served_as`` names another model as the one that answered, as a server that routes
a name to its own model does),
``slots`` (an integer: a slot-limited model that serves that many requests at once, each for
``latency_ms``, and queues the rest, as llama.cpp or vLLM at capacity: more in flight only adds
waiting) and ``rate_limit``, a provider's limit (``null`` lifts it): ``{"concurrent": N,
"retry_after": s}`` answers a request arriving while N are being served 429 with
``Retry-After: s``; ``{"requests": R, "per_s": W}`` takes R requests per fixed window of W
seconds, every answer saying so in ``x-ratelimit-limit-requests``,
``x-ratelimit-remaining-requests`` and ``x-ratelimit-reset-requests`` (seconds to the window's
end, as ``"0.35s"``), and answers 429 past them with ``Retry-After`` the seconds left,
``POST /_control/reset``, ``GET /_control/stats``, ``GET /_control/requests`` (the bodies of
the last 1,000 chat requests, oldest first: what each request sent). A fault is one of ``{"status": 500}``,
``{"status": 429, "retry_after": 0.1}``, ``{"drop": true}``, ``{"stall": seconds}``; faults are
applied to the next requests in order.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import time
from collections import Counter, deque
from typing import Any

from verifiers_lite.clients.openai_wire import (
    chat_completion_body,
    chat_completion_chunks,
    dumps,
    read_usage,
    responses_body,
    responses_events,
    responses_request,
    sse,
)
from verifiers_lite.core.model_client import ChatResponse
from verifiers_lite.testing.server_process import ServerProcess, request_body, serve
from verifiers_lite.testing.server_process import free_port as free_port  # where tests import it

_EXPR = re.compile(r"(-?\d+)\s*([+\-*])\s*(-?\d+)")
_NUM = re.compile(r"-?\d+")

MODELS: tuple[str, ...] = (
    "fake-arith",
    "fake-echo",
    "fake-tool",
    "fake-guess",
    "fake-length",
    "fake-think",
    "fake-think-reasoning",
    "fake-think-inline",
    "fake-vision",
    "fake-text-only",
)
_THINK_FIELDS = {
    "fake-think": "reasoning_content",
    "fake-think-reasoning": "reasoning",
    "fake-think-inline": None,
}
_LIST_CONTENT_ERROR = 'can only concatenate str (not "list") to str'
_RECORDED = 1000


class FakeChatServer:
    """The ASGI app; state is per process."""

    def __init__(
        self,
        latency_ms: float = 0.0,
        correct_rate: float = 0.5,
        models: tuple[str, ...] | list[str] = MODELS,
    ) -> None:
        self.models = list(models)
        self.latency = latency_ms / 1000
        self.correct_rate = correct_rate
        self.system_fingerprint: str | None = None
        self.faults: list[dict[str, Any]] = []
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.counter = 0
        self.by_status: Counter[int] = Counter()
        self.recorded: deque[bytes] = deque(maxlen=_RECORDED)
        self.faults = []
        self.system_fingerprint = None
        self.created: int | None = None
        self.cached_tokens = 0
        self.usage_extra: dict[str, Any] = {}
        self.served_as: str | None = None
        self.slots: asyncio.Semaphore | None = None
        self.rate_limit: dict[str, Any] | None = None
        self.serving = 0  # requests admitted past the rate limit and not yet answered
        self.window_start, self.window_count = 0.0, 0  # a request-rate limit's window

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = await request_body(scope, receive, send)
        if body is None:
            return
        path, method = scope["path"], scope["method"]
        if path.endswith("/chat/completions") and method == "POST":
            await self._chat(body, send)
        elif path.endswith("/responses") and method == "POST":
            await self._responses(body, send)
        elif path == "/_control/config" and method == "POST":
            self.configure(json.loads(body or b"{}"))
            await _json(send, 200, {"ok": True})
        elif path == "/_control/reset" and method == "POST":
            self.reset()
            await _json(send, 200, {"ok": True})
        elif path == "/_control/requests":
            await _json(send, 200, {"requests": [json.loads(b) for b in self.recorded]})
        elif path == "/_control/stats":
            await _json(
                send,
                200,
                {
                    "requests": self.requests,
                    "in_flight": self.in_flight,
                    "max_in_flight": self.max_in_flight,
                    "by_status": dict(self.by_status),
                    "faults_left": len(self.faults),
                },
            )
        elif path == "/health":
            await _json(send, 200, {"status": "ok", "data": [{"id": "fake-arith"}]})
        elif path == "/v1/models":
            await _json(
                send,
                200,
                {
                    "object": "list",
                    "data": [
                        {
                            "id": m,
                            "object": "model",
                            "created": 0,
                            "owned_by": "fake-server",
                            "max_model_len": 2048,
                        }
                        for m in self.models
                    ],
                },
            )
        else:
            await _json(send, 404, {"error": {"message": f"no route {method} {path}"}})

    def configure(self, cfg: dict[str, Any]) -> None:
        """Apply a ``POST /_control/config`` body (see the module docstring)."""
        if "latency_ms" in cfg:
            self.latency = float(cfg["latency_ms"]) / 1000
        if "correct_rate" in cfg:
            self.correct_rate = float(cfg["correct_rate"])
        if "faults" in cfg:
            self.faults = list(cfg["faults"])
        if "system_fingerprint" in cfg:
            self.system_fingerprint = cfg["system_fingerprint"]
        if "created" in cfg:
            self.created = cfg["created"]
        if "cached_tokens" in cfg:
            self.cached_tokens = int(cfg["cached_tokens"])
        if "usage_extra" in cfg:
            self.usage_extra = dict(cfg["usage_extra"])
        if "served_as" in cfg:
            self.served_as = cfg["served_as"]
        if "slots" in cfg:
            self.slots = asyncio.Semaphore(int(cfg["slots"])) if cfg["slots"] else None
        if "rate_limit" in cfg:
            self.rate_limit = dict(cfg["rate_limit"]) if cfg["rate_limit"] else None

    async def _chat(self, body: bytes, send: Any) -> None:
        self.requests += 1
        self.recorded.append(body)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        status = 200
        admitted = False
        try:
            limited = self._limited()
            if limited is not None:
                status = 429
                await _json(send, 429, {"error": {"message": "rate limit"}}, limited)
                return
            if self.rate_limit is not None and "concurrent" in self.rate_limit:
                self.serving += 1
                admitted = True
            fault = self.faults.pop(0) if self.faults else None
            await self._serve_time()
            if fault:
                status = await self._fault(fault, send)
                if status == 0:
                    raise ConnectionAbortedError("fault injection: dropped connection")
                if status != 200:
                    return
            try:
                req = json.loads(body)
                messages = req["messages"]
                model = str(req.get("model", "fake-arith"))
            except (ValueError, KeyError, TypeError):
                status = 400
                await _json(send, 400, {"error": {"message": "body must be JSON with 'messages'"}})
                return
            if model not in self.models:  # as vLLM answers a model it does not serve
                status = 404
                await _json(send, 404, _model_not_found(model))
                return
            if model == "fake-text-only" and any(
                isinstance(m.get("content"), list) for m in messages
            ):
                status = 500
                await _json(send, 500, {"error": {"message": _LIST_CONTENT_ERROR}})
                return
            message, finish = self._answer(model, messages, req)
            turn = self._turn(messages, message, finish)
            await self._reply(send, req, self.served_as or model, turn)
        finally:
            self.in_flight -= 1
            self.serving = max(0, self.serving - admitted)
            self.by_status[status] += 1

    async def _fault(self, fault: dict[str, Any], send: Any) -> int:
        """Apply an injected fault: the status it answered (0: a dropped connection, which the
        caller then raises), 200 when it only stalled."""
        if "stall" in fault:
            await asyncio.sleep(float(fault["stall"]))
        if fault.get("drop"):
            start = [(b"content-type", b"application/json"), (b"content-length", b"1000")]
            await send({"type": "http.response.start", "status": 200, "headers": start})
            await send({"type": "http.response.body", "body": b'{"choi', "more_body": True})
            return 0
        if "status" in fault:
            status = int(fault["status"])
            headers = {"retry-after": str(fault["retry_after"])} if "retry_after" in fault else {}
            message = fault.get("message", f"injected {status}")
            await _json(send, status, {"error": {"message": message}}, headers)
            return status
        return 200

    async def _serve_time(self) -> None:
        """The model's time for one request: ``latency``, in one of the ``slots`` when limited."""
        if self.slots is None:
            if self.latency:
                await asyncio.sleep(self.latency)
            return
        async with self.slots:
            await asyncio.sleep(self.latency)

    def _limited(self) -> dict[str, str] | None:
        """The headers of a 429 when the rate limit refuses this request, else None."""
        limit = self.rate_limit
        if limit is None:
            return None
        if "concurrent" in limit:
            if self.serving < int(limit["concurrent"]):
                return None
            return {"retry-after": f"{float(limit.get('retry_after', 1.0)):g}"}
        left = self._window_left()
        if self.window_count < int(limit["requests"]):
            self.window_count += 1
            return None
        return {"retry-after": f"{left:.3f}", **self.rate_headers()}

    def _window_left(self) -> float:
        """Seconds to the end of the request-rate window (a new one starts when one ends)."""
        assert self.rate_limit is not None
        now, width = time.monotonic(), float(self.rate_limit["per_s"])
        if now >= self.window_start + width:
            self.window_start, self.window_count = now, 0
        return self.window_start + width - now

    def rate_headers(self) -> dict[str, str]:
        """A request-rate limit's ``x-ratelimit-*`` headers (none without one)."""
        limit = self.rate_limit
        if limit is None or "requests" not in limit:
            return {}
        left, total = self._window_left(), int(limit["requests"])
        return {
            "x-ratelimit-limit-requests": str(total),
            "x-ratelimit-remaining-requests": str(max(0, total - self.window_count)),
            "x-ratelimit-reset-requests": f"{left:.3f}s",
        }

    def _turn(
        self, messages: list[dict[str, Any]], message: dict[str, Any], finish: str
    ) -> ChatResponse:
        """The turn for ``message``, with usage counted in words (reasoning words counted as
        completion tokens and reported apart, as OpenAI-compatible servers do)."""
        prompt_tokens = sum(len(str(m.get("content") or "").split()) for m in messages)
        completion_tokens = len(str(message.get("content") or "").split()) + 1
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        reasoning_tokens = len(reasoning.split()) if reasoning else 0
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens + reasoning_tokens,
            "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
            "prompt_tokens_details": {"cached_tokens": min(self.cached_tokens, prompt_tokens)},
        }
        for key, value in self.usage_extra.items():  # a provider's own fields, nested ones merged
            if isinstance(value, dict) and isinstance(usage.get(key), dict):
                usage[key] = {**usage[key], **value}
            else:
                usage[key] = value
        return ChatResponse(
            message,
            finish,
            read_usage(usage),
            system_fingerprint=self.system_fingerprint,
            response_id=f"chatcmpl-{self.requests}",
            created=int(time.time()) if self.created is None else self.created,
        )

    async def _reply(self, send: Any, req: dict[str, Any], model: str, turn: ChatResponse) -> None:
        """The turn as a chat completion, or as its chunks when the request streams."""
        rid, created = turn.response_id or "", turn.created or 0
        if req.get("stream"):
            usage = bool((req.get("stream_options") or {}).get("include_usage"))
            chunks = chat_completion_chunks(turn, model, rid, created, include_usage=usage)
            await _stream(send, sse(chunks, done=True))
        else:
            body = dumps(chat_completion_body(turn, model, rid, created))
            await _raw(send, 200, body, self.rate_headers())

    async def _responses(self, body: bytes, send: Any) -> None:
        """The Responses API: the same answers as the chat route, in that dialect."""
        self.requests += 1
        self.recorded.append(body)
        try:
            req = json.loads(body)
            parsed = responses_request(req)
        except (ValueError, TypeError, AttributeError) as exc:
            self.by_status[400] += 1
            await _json(send, 400, {"error": {"message": f"bad request: {exc}"}})
            return
        model = parsed.model or "fake-arith"
        if model not in self.models:
            self.by_status[404] += 1
            await _json(send, 404, _model_not_found(model))
            return
        message, finish = self._answer(model, parsed.messages, parsed.sampling_args)
        turn = self._turn(parsed.messages, message, finish)
        rid, created = turn.response_id or "", turn.created or 0
        self.by_status[200] += 1
        if parsed.stream:
            await _stream(
                send, sse(responses_events(turn, self.served_as or model, rid, created), named=True)
            )
        else:
            await _raw(
                send, 200, dumps(responses_body(turn, self.served_as or model, rid, created))
            )

    def _correct(self, messages: list[dict[str, Any]], req: dict[str, Any]) -> bool:
        key = json.dumps(messages, sort_keys=True)
        if req.get("temperature", 1.0) != 0:
            self.counter += 1
            key += f"#{self.counter}"
        if req.get("seed") is not None:
            key += f"@{req['seed']}"
        h = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        return h < self.correct_rate

    def _answer(
        self, model: str, messages: list[dict[str, Any]], req: dict[str, Any]
    ) -> tuple[dict[str, Any], str]:
        last_user = next(
            (str(m.get("content") or "") for m in reversed(messages) if m.get("role") == "user"), ""
        )
        if model == "fake-echo":
            return {"role": "assistant", "content": last_user}, "stop"
        if model == "fake-length":
            return {
                "role": "assistant",
                "content": "I was going to say something very lo",
            }, "length"
        if model == "fake-tool":
            return self._tool_answer(messages, last_user), "stop"
        if model == "fake-guess":
            return {"role": "assistant", "content": _bisect_guess(messages)}, "stop"
        if model in _THINK_FIELDS:
            message = _think_answer(messages, last_user, _THINK_FIELDS[model], _offers_tool(req))
            return message, "tool_calls" if message.get("tool_calls") else "stop"
        if model == "fake-vision":
            return {"role": "assistant", "content": _describe_images(messages)}, "stop"
        if model == "fake-text-only":
            return {"role": "assistant", "content": last_user}, "stop"
        match = _EXPR.search(last_user)
        if match is None:
            return {"role": "assistant", "content": "I do not know."}, "stop"
        value = _apply(match)
        if not self._correct(messages, req):
            value += 1 + int(hashlib.md5(last_user.encode()).hexdigest()[:2], 16) % 3
        return {
            "role": "assistant",
            "content": f"Let me compute. The answer is \\boxed{{{value}}}.",
        }, "stop"

    def _tool_answer(self, messages: list[dict[str, Any]], last_user: str) -> dict[str, Any]:
        if messages and messages[-1].get("role") == "tool":
            result = str(messages[-1].get("content") or "")
            return {"role": "assistant", "content": f"The calculator says \\boxed{{{result}}}."}
        match = _EXPR.search(last_user)
        return _calculator_call(messages, match.group(0) if match else "1 + 1")


def _calculator_call(messages: list[dict[str, Any]], expression: str) -> dict[str, Any]:
    """An assistant turn calling the ``calculator`` tool on ``expression`` (its call id counts
    the assistant turns before it)."""
    n = sum(1 for m in messages if m.get("role") == "assistant")
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {
                    "name": "calculator",
                    "arguments": json.dumps({"expression": expression}),
                },
            }
        ],
    }


def _apply(match: re.Match[str]) -> int:
    a, op, b = int(match.group(1)), match.group(2), int(match.group(3))
    return a + b if op == "+" else a - b if op == "-" else a * b


def _offers_tool(req: dict[str, Any], name: str = "calculator") -> bool:
    """Whether the request offers a tool of that name."""
    tools = req.get("tools")
    return isinstance(tools, list) and any(
        isinstance(t, dict) and (t.get("function") or {}).get("name") == name for t in tools
    )


def _think_answer(
    messages: list[dict[str, Any]], last_user: str, field: str | None, calculator: bool = True
) -> dict[str, Any]:
    """``fake-think``'s turn, its reasoning under ``field`` (None: inline, before the content):
    with a ``calculator`` tool, a call to it and then its result as the answer; without one, the
    answer at once (a first guess, one more than the truth, only in the reasoning)."""
    match = _EXPR.search(last_user)
    if messages and messages[-1].get("role") == "tool":
        result = str(messages[-1].get("content") or "")
        reasoning = f"The calculator returned {result}, so my first guess was wrong."
        message: dict[str, Any] = {
            "role": "assistant",
            "content": f"The answer is \\boxed{{{result}}}.",
        }
    elif not calculator:
        value = _apply(match) if match else 2
        reasoning = (
            f"At a glance the answer is \\boxed{{{value + 1}}}, but checking it again "
            f"it is {value}."
        )
        message = {"role": "assistant", "content": f"The answer is \\boxed{{{value}}}."}
    else:
        guess = _apply(match) + 1 if match else 3
        reasoning = (
            f"At a glance the answer is \\boxed{{{guess}}}, but I will check with the calculator."
        )
        message = _calculator_call(messages, match.group(0) if match else "1 + 1")
    if field is None:
        message["content"] = f"<think>{reasoning}</think>{message['content'] or ''}"
    else:
        message[field] = reasoning
    return message


def _describe_images(messages: list[dict[str, Any]]) -> str:
    """``fake-vision``'s answer: the colour of each image part of the last user message."""
    from verifiers_lite.testing.png import data_uri_colour

    last: dict[str, Any] = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    content = last.get("content")
    parts = content if isinstance(content, list) else []
    urls = [
        p["image_url"]["url"] if isinstance(p.get("image_url"), dict) else p.get("image_url")
        for p in parts
        if isinstance(p, dict) and p.get("type") == "image_url"
    ]
    if not urls:
        return "I see no image."
    colours = []
    for url in urls:
        try:
            colours.append(data_uri_colour(str(url)))
        except ValueError:
            colours.append("unreadable")
    return (
        f"The image is {colours[0]}."
        if len(colours) == 1
        else f"The images are {', '.join(colours)}."
    )


def _bisect_guess(messages: list[dict[str, Any]]) -> str:
    lo, hi = 1, 100
    m = re.search(r"between (\d+) and (\d+)", json.dumps(messages))
    if m:
        lo, hi = int(m.group(1)), int(m.group(2))
    guess = None
    for msg in messages:
        text = str(msg.get("content") or "")
        if msg.get("role") == "assistant":
            nums = _NUM.findall(text)
            guess = int(nums[-1]) if nums else guess
        elif msg.get("role") == "user" and guess is not None:
            low = text.lower()
            if "higher" in low:
                lo = guess + 1
            elif "lower" in low:
                hi = guess - 1
    return f"My guess is {(lo + hi) // 2}"


async def _raw(send: Any, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
    hdrs = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    hdrs += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": hdrs})
    await send({"type": "http.response.body", "body": data})


async def _stream(send: Any, data: bytes) -> None:
    hdrs = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
    await send({"type": "http.response.start", "status": 200, "headers": hdrs})
    await send({"type": "http.response.body", "body": data})


def _model_not_found(model: str) -> dict[str, Any]:
    """vLLM's answer to a request for a model it does not serve."""
    message = f"The model `{model}` does not exist."
    return {"error": {"message": message, "type": "NotFoundError", "param": "model", "code": 404}}


async def _json(
    send: Any, status: int, payload: Any, headers: dict[str, str] | None = None
) -> None:
    data = json.dumps(payload).encode()
    hdrs = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    hdrs += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": hdrs})
    await send({"type": "http.response.body", "body": data})


class FakeServerProcess(ServerProcess):
    """Runs the fake server in a child process; a context manager that always stops it."""

    module = "verifiers_lite.testing.fake_server"
    name = "fake server"

    def __init__(
        self,
        latency_ms: float = 0.0,
        correct_rate: float = 0.5,
        port: int | None = None,
        models: tuple[str, ...] | list[str] = MODELS,
    ) -> None:
        super().__init__(port)
        self.latency_ms = latency_ms
        self.correct_rate = correct_rate
        self.models = list(models)

    def child_args(self) -> list[str]:
        return [
            "--latency-ms",
            str(self.latency_ms),
            "--correct-rate",
            str(self.correct_rate),
            "--models",
            ",".join(self.models),
        ]

    def control(self, path: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        return dict(self.request_json(f"/_control/{path}", payload))

    def configure(self, **cfg: Any) -> None:
        self.control("config", cfg)

    def reset(self) -> None:
        self.control("reset", {})

    def stats(self) -> dict[str, Any]:
        return self.control("stats")

    def requests(self) -> list[dict[str, Any]]:
        """The bodies of the last chat requests the server received, oldest first."""
        return list(self.control("requests")["requests"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="fake OpenAI-compatible chat server (loopback only)"
    )
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--correct-rate", type=float, default=0.5)
    parser.add_argument(
        "--models",
        default=",".join(MODELS),
        help="comma-separated model ids GET /v1/models lists (default: all)",
    )
    args = parser.parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    serve(FakeChatServer(args.latency_ms, args.correct_rate, models), args.port)


if __name__ == "__main__":
    main()
