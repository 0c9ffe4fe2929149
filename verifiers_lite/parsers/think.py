"""ThinkParser: drops the <think>...</think> block, then applies an extractor to the rest."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from verifiers_lite.parsers.parser import Parser

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


class ThinkParser(Parser):
    """Strips reasoning; ``extract_fn`` (e.g. :func:`extract_boxed_answer`) picks the answer."""

    def __init__(self, extract_fn: Callable[[str], str | None] | None = None) -> None:
        self.extract_fn = extract_fn

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
            from verifiers_lite.messages import last_assistant_text

            text = completion if isinstance(completion, str) else last_assistant_text(completion)
            ok = text.count("<think>") == 1 and text.count("</think>") == 1 and text.split("</think>")[-1].strip()
            return 1.0 if ok else 0.0

        return think_format_reward
