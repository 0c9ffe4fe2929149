"""Small programs the program-environment tests run: ``python -m tests.programs.agents MODE``.

Standard library only at the top (64 of them start at once in a test); the ``openai`` SDK is
imported by the modes that use it. Each reaches the model through ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` like any OpenAI program.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any


def post(path: str, body: dict[str, Any], key: str | None = None) -> tuple[int, bytes]:
    """POST ``body`` to the endpoint; the status and the raw body (errors included)."""
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"].rstrip("/") + path,
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {os.environ['OPENAI_API_KEY'] if key is None else key}",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def question() -> str:
    return json.loads(Path(os.environ["VF_TASK_FILE"]).read_text())["question"]


def raw(out_dir: str) -> None:
    """The differential program: a tool-call conversation in both dialects, each whole and
    streamed, every response body written byte for byte to ``out_dir``."""
    model = os.environ["VF_MODEL"]
    out = Path(out_dir)
    tools = [{"type": "function", "function": {"name": "calculator", "parameters": {}}}]
    for stream in (False, True):
        messages: list[dict[str, Any]] = [{"role": "user", "content": "What is 6 * 7?"}]
        for turn in range(2):
            body = {"model": model, "messages": messages, "tools": tools, "temperature": 0}
            if stream:
                body.update(stream=True, stream_options={"include_usage": True})
            status, data = post("/chat/completions", body)
            (out / f"chat-{stream}-{turn}").write_bytes(data)
            if stream:
                break
            message = json.loads(data)["choices"][0]["message"]
            messages += [message, {"role": "tool", "tool_call_id": "call_0", "content": "42"}]
        items: list[dict[str, Any]] = [{"role": "user", "content": "What is 6 * 7?"}]
        for turn in range(2):
            body = {
                "model": model,
                "input": items,
                "tools": [{"type": "function", "name": "calculator", "parameters": {}}],
                "stream": stream,
            }
            status, data = post("/responses", body)
            (out / f"responses-{stream}-{turn}").write_bytes(data)
            if stream:
                break
            for item in json.loads(data)["output"]:
                items.append(item)
                if item["type"] == "function_call":
                    items.append(
                        {"type": "function_call_output", "call_id": item["call_id"], "output": "42"}
                    )
    print("done")


def sdk(dialects: list[str]) -> None:
    """The ``openai`` SDK in each dialect, whole or streamed: one answer line per dialect."""
    from openai import OpenAI

    client = OpenAI(max_retries=0)
    model = "gpt-x"  # a name of its own: the endpoint maps it to the run's model
    messages: Any = [{"role": "user", "content": question()}]
    for dialect in dialects:
        if dialect == "chat":
            reply = client.chat.completions.create(
                model=model, messages=messages, temperature=1.5, top_p=0.5, user="me"
            )
            print(reply.choices[0].message.content)
        elif dialect == "chat_stream":
            chunks = client.chat.completions.create(model=model, messages=messages, stream=True)
            print("".join(c.choices[0].delta.content or "" for c in chunks if c.choices))
        elif dialect == "responses":
            print(client.responses.create(model=model, input=question()).output_text)
        else:
            with client.responses.stream(model=model, input=question()) as events:
                print(events.get_final_response().output_text)


def branches() -> None:
    """Four calls: a conversation, its continuation, a fresh sub-agent, the first again."""

    def ask(messages: list[dict[str, Any]]) -> str:
        status, data = post("/chat/completions", {"model": "mine", "messages": messages})
        return json.loads(data)["choices"][0]["message"]["content"]

    main = [{"role": "system", "content": "main"}, {"role": "user", "content": question()}]
    main.append({"role": "assistant", "content": ask(main)})
    main.append({"role": "user", "content": "go on"})
    main.append({"role": "assistant", "content": ask(main)})
    helper = [{"role": "system", "content": "summariser"}, {"role": "user", "content": "sum up"}]
    summary = ask(helper)
    main.append({"role": "user", "content": f"summary: {summary}"})
    print(ask(main))


def long(calls: int, out_file: str) -> None:
    """One conversation of ``calls`` calls, each answer and a new user turn appended as the
    endpoint sent them; every request's messages written to ``out_file`` as JSON."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": question()}]
    sent = []
    for i in range(calls):
        sent.append(json.loads(json.dumps(messages)))
        status, data = post("/chat/completions", {"model": "m", "messages": messages})
        messages.append(json.loads(data)["choices"][0]["message"])
        messages.append({"role": "user", "content": f"and step {i}?"})
    Path(out_file).write_text(json.dumps(sent))
    print(messages[-2]["content"])


def calls_forever(then: str) -> None:
    """Calls the model until refused; prints the refusal's status and body, then exits
    (``then`` "exit") or ignores it and hangs ("hang")."""
    while True:
        status, data = post(
            "/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "again"}]}
        )
        if status != 200:
            print(status, data.decode())
            sys.stdout.flush()
            if then == "exit":
                return
            while True:
                time.sleep(1)


def fork_and_hang(pids_file: str) -> None:
    """Forks a child that ignores SIGTERM; both hang; their pids go to ``pids_file``."""
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    Path(pids_file + ".tmp").write_text(
        json.dumps({"parent": os.getpid(), "child": child, "pgid": os.getpgid(0)})
    )
    os.replace(pids_file + ".tmp", pids_file)
    while True:
        time.sleep(1)


def main() -> None:
    mode, *args = sys.argv[1:]
    if mode == "raw":
        raw(args[0])
    elif mode == "sdk":
        sdk(args)
    elif mode == "branches":
        branches()
    elif mode == "long":
        long(int(args[0]), args[1])
    elif mode == "calls_forever":
        calls_forever(args[0] if args else "exit")
    elif mode == "spin":
        while True:
            pass
    elif mode == "fork":
        fork_and_hang(args[0])
    elif mode == "flood":
        block = b"x" * (1 << 20)
        for _ in range(1024):
            sys.stdout.buffer.write(block)
        print("\nflood done")
    elif mode == "crash":
        print("about to fail", file=sys.stderr)
        raise SystemExit(3)
    elif mode == "env":
        print(json.dumps(dict(os.environ)))
    elif mode == "echo":
        status, data = post(
            "/chat/completions",
            {"model": "mine", "messages": [{"role": "user", "content": question()}]},
        )
        print(json.loads(data)["choices"][0]["message"]["content"])
    elif mode == "bad_key":
        print(
            post(
                "/chat/completions",
                {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                key=args[0],
            )[0]
        )
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
