"""Classic parsers with verifiers 0.3.1's semantics (they differ from verifiers_lite's own).

- :class:`Parser`: ``parse`` applies ``extract_fn`` (identity), ``parse_answer`` parses the last
  assistant message's text (None without one); its format reward is always 1.0.
- :class:`ThinkParser`: the text after the last ``</think>``, or ``""`` when there is none; its
  format reward is the share of assistant messages that start with ``<think>``, hold one think
  block and say something after it.
- :class:`MaybeThinkParser`: the text after the last ``</think>`` if any, else the whole text.
- :class:`XMLParser`: ``parse`` gives an object with one attribute per allowed tag (first match,
  or last with ``last=True``); ``parse_answer`` takes the latest assistant message that has the
  answer field; ``get_format_str`` describes the format; the format reward scores each
  assistant message 0.4 x (share of field sets present) + 0.2 (well spaced) + 0.2 (starts with
  the first field) + 0.2 (ends with the last) and averages them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from verifiers_lite.parsers.parser import Parser as NativeParser


def _identity(text: str) -> str:
    return text


def _field(message: Any, name: str, default: Any = None) -> Any:
    if isinstance(message, dict):
        return message.get(name, default)
    return getattr(message, name, default)


def content_text(content: Any) -> str:
    """A message content as text: a string as it is, text parts joined by spaces."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        chunks = []
        for part in content:
            text = (
                part.get("text")
                if isinstance(part, dict) and part.get("type") == "text"
                else (None if isinstance(part, dict) else getattr(part, "text", None))
            )
            if isinstance(text, str):
                chunks.append(text)
        return " ".join(chunks).strip()
    return ""


class Parser(NativeParser):
    """Base classic parser: ``extract_fn`` turns a text into the answer."""

    def __init__(self, extract_fn: Callable[[str], Any] = _identity) -> None:
        self.logger = logging.getLogger(f"verifiers.parsers.{type(self).__name__}")
        self.extract_fn = extract_fn

    def parse(self, text: str) -> Any:
        return self.extract_fn(text)

    def _message_field(self, message: Any, field: str, default: Any = None) -> Any:
        return _field(message, field, default)

    def _content_to_text(self, content: Any) -> str:
        return content_text(content)

    def _by_role(self, completion: Any, role: str) -> list[Any]:
        return [m for m in completion if _field(m, "role") == role]

    def get_assistant_messages(self, completion: Any) -> list[Any]:
        return self._by_role(completion, "assistant")

    def get_system_messages(self, completion: Any) -> list[Any]:
        return self._by_role(completion, "system")

    def get_user_messages(self, completion: Any) -> list[Any]:
        return self._by_role(completion, "user")

    def get_tool_messages(self, completion: Any) -> list[Any]:
        return self._by_role(completion, "tool")

    def parse_answer(self, completion: Any) -> Any:
        if isinstance(completion, str):
            return self.parse(completion)
        replies = self.get_assistant_messages(completion)
        if not replies:
            return None
        return self.parse(content_text(_field(replies[-1], "content", "") or ""))

    def get_format_reward_func(self) -> Callable[..., float]:
        def format_reward_func(completion: Any, **kwargs: Any) -> float:
            return 1.0

        return format_reward_func


class ThinkParser(Parser):
    """For models that write ``<think>...</think>`` themselves: the answer follows it."""

    def parse(self, text: str) -> Any:
        text = text.split("</think>")[-1].strip() if "</think>" in text else ""
        return self.extract_fn(text.strip())

    def get_format_reward_func(self) -> Callable[..., float]:
        def follows_format(text: str) -> float:
            ok = (
                text.strip().startswith("<think>")
                and text.count("<think>") == 1
                and text.count("</think>") == 1
                and len(text.split("</think>")[-1]) > 0
            )
            return 1.0 if ok else 0.0

        def format_reward_func(completion: Any, **kwargs: Any) -> float:
            replies = self.get_assistant_messages(completion)
            if not replies:
                return 0.0
            return sum(
                follows_format(content_text(_field(m, "content", "") or "")) for m in replies
            ) / len(replies)

        return format_reward_func


class MaybeThinkParser(Parser):
    """The text after the last ``</think>`` when there is one, else the whole text."""

    def parse(self, text: str) -> Any:
        return self.extract_fn(text.split("</think>")[-1].strip())


def _xml_fields(fields: list[str | tuple[str, ...]]) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for field in fields:
        if isinstance(field, str):
            names = [field]
        elif isinstance(field, tuple):
            if not field:
                raise ValueError("Field tuple cannot be empty.")
            if not all(isinstance(alt, str) for alt in field):
                raise TypeError("All alternatives in a tuple must be strings.")
            names = list(field)
        else:
            raise TypeError("Each field must be a string or a tuple of strings.")
        if names[0] in {canonical for canonical, _ in out}:
            raise ValueError(f"Duplicate field name: {names[0]}")
        out.append((names[0], names))
    return out


class XMLParser(Parser):
    """Fields written as ``<tag>...</tag>``; a field may be a tuple of alternative tags."""

    def __init__(
        self,
        fields: list[str | tuple[str, ...]],
        answer_field: str = "answer",
        extract_fn: Callable[[str], Any] = _identity,
    ) -> None:
        super().__init__(extract_fn=extract_fn)
        self._fields = _xml_fields(fields)
        self.answer_field = answer_field

    def parse(self, text: str, strip: bool = True, last: bool = False) -> Any:
        found: dict[str, str | None] = {}
        for _, alternatives in self._fields:
            for tag in alternatives:
                matches = list(re.finditer(rf"<{tag}>\s*(.*?)\s*</{tag}>", text, re.DOTALL))
                match = (matches[-1] if last else matches[0]) if matches else None
                found[tag] = (
                    None if match is None else (match.group(1).strip() if strip else match.group(1))
                )
        return SimpleNamespace(**found)

    def parse_answer(self, completion: Any) -> str | None:
        if isinstance(completion, str):
            value = getattr(self.parse(completion, last=True), self.answer_field, None)
            return value
        for message in reversed(self.get_assistant_messages(completion)):
            value = getattr(
                self.parse(content_text(_field(message, "content", "") or "")),
                self.answer_field,
                None,
            )
            if value is not None:
                return value
        return None

    def get_format_str(self) -> str:
        lines = []
        for canonical, alternatives in self._fields:
            tag = f"[ {' | '.join(alternatives)} ]" if len(alternatives) > 1 else canonical
            lines.append(f"<{tag}>\n...\n</{tag}>")
        return "\n".join(lines)

    def get_fields(self) -> list[str]:
        return [canonical for canonical, _ in self._fields]

    def format(self, **values: Any) -> str:
        parts = []
        for canonical, alternatives in self._fields:
            key = (
                canonical
                if canonical in values
                else next((a for a in alternatives if a in values), None)
            )
            if key is None or values[key] is None:
                raise ValueError(f"Missing value for field '{canonical}' (allowed: {alternatives})")
            parts.append(f"<{canonical}>\n{values[key]}\n</{canonical}>")
        return "\n".join(parts)

    def _message_format_score(self, content: str) -> float:
        parsed, unstripped = self.parse(content), self.parse(content, strip=False)
        present: set[int] = set()
        any_field, spaced = False, True
        for i, (_, alternatives) in enumerate(self._fields):
            for tag in alternatives:
                if getattr(parsed, tag, None) is not None:
                    any_field = True
                    present.add(i)
                    spaced = spaced and getattr(unstripped, tag, None) is not None
                elif f"<{tag}>" in content or f"</{tag}>" in content:
                    present.add(i)
        body = content.strip()
        score = 0.4 * len(present) / len(self._fields) if any_field else 0.0
        score += 0.2 if spaced else 0.0
        score += 0.2 if any(body.startswith(f"<{t}>") for t in self._fields[0][1]) else 0.0
        score += 0.2 if any(body.endswith(f"</{t}>") for t in self._fields[-1][1]) else 0.0
        return score

    def get_format_reward_func(self) -> Callable[..., float]:
        def format_reward_func(completion: Any) -> float:
            replies = self.get_assistant_messages(completion)
            if not replies:
                return 0.0
            scores = [
                self._message_format_score(content_text(_field(m, "content", "") or ""))
                for m in replies
            ]
            return sum(scores) / len(scores)

        return format_reward_func
