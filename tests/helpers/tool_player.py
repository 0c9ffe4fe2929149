"""A scripted player for token-level ToolEnv tests: it asks the ``add`` tool for the sum in the
question, then answers with the tool's result in ``\\boxed{}``; ``boxed_correct`` scores that."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


def tool_player(preamble: str = "Calling. ") -> Callable[[str], str]:
    """``respond(prompt)`` for a ScriptedSampler: a tool call first (after ``preamble``), then
    the boxed tool result."""

    def respond(prompt: str) -> str:
        q = re.findall(r"What is (\d+) \+ (\d+)\?", prompt)[-1]
        if "<|im_start|>tool" not in prompt:
            return (
                preamble
                + f'<tool_call>{{"name": "add", "arguments": {{"a": {q[0]}, "b": {q[1]}}}}}</tool_call>'
            )
        return "The answer is \\boxed{" + re.findall(r"tool\n(.*?)<", prompt)[-1] + "}"

    return respond


def boxed_correct(completion: Any, answer: str, **kwargs: Any) -> float:
    return (
        1.0 if f"\\boxed{{{answer}}}" in (completion[-1]["content"] if completion else "") else 0.0
    )
