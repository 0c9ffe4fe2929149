"""Helpers shared by the bundled environments (not an environment: the leading underscore
keeps it out of ``list_environments()``)."""

from __future__ import annotations

import re
from typing import Any

import verifiers_lite as vf
from verifiers_lite.core.messages import Messages, last_assistant_text

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# The number a small model states as its result: after "=", "is" or "equals" ("3 + 4 = 7").
_STATED = re.compile(r"(?:=|\bis\b|\bequals\b)\s*\**\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)


def parse_number(text: str | None) -> str | None:
    """The answer number in ``text``: ``\\boxed{}`` if present, else the first number stated after
    ``=``/``is``/``equals``, else the last number; normalised ("7.0" -> "7"). None if no number."""
    if not text:
        return None
    boxed = vf.extract_boxed_answer(text)
    if boxed is not None:
        found = _NUMBER.findall(boxed.replace(",", ""))
        return _normalise(found[-1]) if found else None
    stated = _STATED.search(text)
    if stated is not None:
        return _normalise(stated.group(1))
    numbers = _NUMBER.findall(text.replace(",", ""))
    return _normalise(numbers[-1]) if numbers else None


def _normalise(number: str) -> str:
    value = float(number)
    return str(int(value)) if value.is_integer() else str(value)


class NumberParser(vf.Parser):
    """Reads the answer number of the last assistant message (see :func:`parse_number`)."""

    def parse(self, text: str) -> str:
        return parse_number(text) or ""

    def parse_answer(self, completion: Messages | str) -> str | None:
        text = completion if isinstance(completion, str) else last_assistant_text(completion)
        return parse_number(text)


def exact_number_reward(completion: Any, answer: Any, parser: vf.Parser) -> float:
    """1.0 when the parsed number equals the gold answer."""
    parsed = parser.parse_answer(completion)
    return 1.0 if parsed is not None and parsed == parse_number(str(answer)) else 0.0


def answered(completion: Any, parser: vf.Parser) -> float:
    """1.0 when a number could be read from the completion at all (a format metric)."""
    return 0.0 if parser.parse_answer(completion) is None else 1.0
