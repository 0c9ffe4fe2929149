"""Base parser: turns a completion into the answer string a reward function compares."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from verifiers_lite.core.messages import Messages, last_assistant_text


class Parser:
    """Identity parser: the answer is the last assistant message, stripped.

    Subclasses override :meth:`parse` (text -> parsed text) and :meth:`parse_answer`, and
    :meth:`split_reasoning` when their model thinks inline (as :class:`ThinkParser` does).
    """

    def split_reasoning(self, text: str) -> tuple[str | None, str]:
        """``(reasoning, answer)`` of a model turn's text: where inline reasoning ends. The
        environment moves the reasoning out of the message's ``content`` into
        ``reasoning_content``; this parser finds none (``(None, text)``)."""
        return None, text

    def parse(self, text: str) -> str:
        return text.strip()

    def parse_answer(self, completion: Messages | str) -> str | None:
        text = completion if isinstance(completion, str) else last_assistant_text(completion)
        parsed = self.parse(text)
        return parsed if parsed != "" else None

    def get_format_reward_func(self) -> Callable[..., float]:
        """A reward function: 1.0 when an answer can be parsed from the completion."""

        def format_reward(completion: Any) -> float:
            return 1.0 if self.parse_answer(completion) is not None else 0.0

        return format_reward
