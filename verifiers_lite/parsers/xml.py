"""XMLParser: reads fields written as <tag>...</tag> in a completion."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from verifiers_lite.core.messages import Messages, last_assistant_text
from verifiers_lite.parsers.parser import Parser


class XMLParser(Parser):
    """Parses ``<field>value</field>`` blocks; ``answer_field`` is what parse_answer returns.

    ``fields`` lists tag names; a field may be a tuple of alternatives, the first being canonical
    (e.g. ``("answer", "result")``).

    Args:
        fields: the tag names, each a name or a tuple of alternatives (the first canonical).
        answer_field: the field whose value ``parse_answer`` returns.
    """

    def __init__(self, fields: list[str | tuple[str, ...]], answer_field: str = "answer") -> None:
        if not fields:
            raise ValueError("XMLParser needs at least one field")
        self.fields: list[tuple[str, ...]] = [
            (f,) if isinstance(f, str) else tuple(f) for f in fields
        ]
        self.answer_field = answer_field

    def parse_fields(self, text: str) -> dict[str, str | None]:
        """Last value of each field (canonical name -> text or None)."""
        out: dict[str, str | None] = {}
        for alternatives in self.fields:
            value = None
            for tag in alternatives:
                found = re.findall(
                    rf"<{re.escape(tag)}>\s*(.*?)\s*</{re.escape(tag)}>", text, re.DOTALL
                )
                if found:
                    value = found[-1]
                    break
            out[alternatives[0]] = value
        return out

    def parse(self, text: str) -> str:
        return (self.parse_fields(text).get(self.answer_field) or "").strip()

    def parse_answer(self, completion: Messages | str) -> str | None:
        text = completion if isinstance(completion, str) else last_assistant_text(completion)
        value = self.parse_fields(text).get(self.answer_field)
        return value.strip() if value is not None else None

    def format(self, **values: str) -> str:
        """Render values as the XML this parser reads (useful for few-shot examples)."""
        return "\n".join(f"<{k}>\n{v}\n</{k}>" for k, v in values.items())

    def get_format_reward_func(self) -> Callable[..., float]:
        def xml_format_reward(completion: Any) -> float:
            text = completion if isinstance(completion, str) else last_assistant_text(completion)
            fields = self.parse_fields(text)
            return sum(v is not None for v in fields.values()) / len(fields)

        return xml_format_reward
