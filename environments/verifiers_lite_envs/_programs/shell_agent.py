"""A shell-style agent: the model runs shell commands in the working directory until done.

Reads the task on stdin, offers the model one tool, ``shell`` (a command run with ``sh -c`` in
the current directory, its output returned), and loops until the model answers without a tool
call; prints that answer. Written with the plain ``openai`` SDK.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from openai import OpenAI

SYSTEM_PROMPT = (
    "You are a coding agent working in a directory. Use the shell tool to inspect and edit "
    "files (cat, sed, printf ... > file). When the task is done, reply with a short summary."
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "shell",
            "description": "Run a shell command in the working directory; returns its output.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        },
    }
]
MAX_STEPS = 8


def shell(command: str) -> str:
    """The command's stdout and stderr (cut at 4,000 characters) and its exit status."""
    try:
        done = subprocess.run(
            ["sh", "-c", command], capture_output=True, text=True, timeout=20, check=False
        )
    except subprocess.TimeoutExpired:
        return "error: the command ran past 20 seconds"
    return f"{(done.stdout + done.stderr)[-4000:]}\n[exit status {done.returncode}]"


def main() -> None:
    client = OpenAI()
    model = os.environ.get("VF_MODEL", "gpt-4o-mini")
    messages: list[dict] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": sys.stdin.read()},
    ]
    for _ in range(MAX_STEPS):
        reply = client.chat.completions.create(
            model=model, messages=messages, tools=TOOLS, max_tokens=256
        )
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            print(message.content or "")
            return
        for call in message.tool_calls:
            try:
                command = str(json.loads(call.function.arguments).get("command", ""))
            except ValueError:
                command = ""
            messages.append({"role": "tool", "tool_call_id": call.id, "content": shell(command)})


if __name__ == "__main__":
    main()
