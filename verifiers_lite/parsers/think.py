"""ThinkParser: for models that think inline; the answer is what follows the <think> block."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from verifiers_lite.core.messages import Messages, message_text
from verifiers_lite.core.reasoning import reasoning_of, split_think
from verifiers_lite.parsers.parser import Parser

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


class ThinkParser(Parser):
    """Reads the answer after the reasoning; ``extract_fn`` (e.g. :func:`extract_boxed_answer`)
    picks it out. A model turn's ``<think>…</think>`` block (or ``…</think>`` when the chat
    template opened it) is moved out of ``content`` into ``reasoning_content`` as the turn
    arrives, so nothing reads it as the answer; text still holding a block is stripped too.

    Args:
        extract_fn: picks the answer out of the text after the reasoning; None: all of that text.
    """

    def __init__(self, extract_fn: Callable[[str], str | None] | None = None) -> None:
        self.extract_fn = extract_fn

    def split_reasoning(self, text: str) -> tuple[str | None, str]:
        return split_think(text)

    def parse(self, text: str) -> str:
        if "</think>" in text:
            text = _THINK.sub("", text)
            text = text.split("</think>")[-1]  # unbalanced: keep what follows the last close
        text = text.strip()
        if self.extract_fn is not None:
            return (self.extract_fn(text) or "").strip()
        return text

    def get_format_reward_func(self) -> Callable[..., float]:
        def think_format_reward(completion: Any) -> float:
            """1.0 when the last turn thought, then answered: one ``<think>…</think>`` block
            followed by text, or its reasoning kept apart and an answer free of think tags."""
            return 1.0 if _thought_then_answered(completion) else 0.0

        return think_format_reward


def _thought_then_answered(completion: Messages | str) -> bool:
    if isinstance(completion, str):
        text, reasoning = completion, None
    else:
        last = next((m for m in reversed(completion) if m.get("role") == "assistant"), None)
        text, reasoning = (
            (message_text(last), reasoning_of(last)) if last is not None else ("", None)
        )
    if reasoning is not None:
        return bool(text.strip()) and "<think>" not in text and "</think>" not in text
    return bool(
        text.count("<think>") == 1
        and text.count("</think>") == 1
        and text.split("</think>")[-1].strip()
    )
