"""A calculator agent written with the plain ``openai`` SDK: a tool-call loop.

Reads the question on stdin, lets the model call ``calculator`` until it answers, prints the
answer. It knows nothing of verifiers_lite: the SDK reads ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` from the environment like any OpenAI program.
"""

from __future__ import annotations

import json
import os
import sys

from openai import OpenAI

from verifiers_lite_envs.calculator import SYSTEM_PROMPT, calculator

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "calculator",
            "description": "Evaluate an arithmetic expression such as '(12 + 7) * 3'.",
            "parameters": {
                "type": "object",
                "properties": {"expression": {"type": "string"}},
                "required": ["expression"],
            },
        },
    }
]
MAX_STEPS = 4


def main() -> None:
    client = OpenAI()
    model = os.environ.get("VF_MODEL", "gpt-4o-mini")
    messages: list[dict] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": sys.stdin.read()},
    ]
    answer = ""
    for _ in range(MAX_STEPS):
        reply = client.chat.completions.create(
            model=model, messages=messages, tools=TOOLS, max_tokens=128
        )
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        answer = message.content or ""
        if not message.tool_calls:
            break
        for call in message.tool_calls:
            try:
                expression = json.loads(call.function.arguments).get("expression", "")
            except ValueError:
                expression = ""
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": calculator(str(expression))}
            )
    print(answer)


if __name__ == "__main__":
    main()
