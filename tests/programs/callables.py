"""Python callables the program-environment tests run as programs (by import path)."""

from __future__ import annotations

from typing import Any


def ask_model(task: dict[str, Any]) -> str:
    """Asks the run's model the task's question through the openai SDK; returns its answer."""
    from openai import OpenAI

    reply = OpenAI(max_retries=0).chat.completions.create(
        model="any", messages=[{"role": "user", "content": task["question"]}]
    )
    return reply.choices[0].message.content or ""
