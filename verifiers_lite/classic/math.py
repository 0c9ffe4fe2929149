"""Classic MathRubric: ``correct_answer`` checks the parsed answer against the reference with
math-verify (both read as ``\\boxed{...}``); parser default: the boxed answer after any think block."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from verifiers_lite.classic.data import extract_boxed_answer
from verifiers_lite.classic.parsers import MaybeThinkParser
from verifiers_lite.classic.rubric import Rubric
from verifiers_lite.rubrics.math import _math_verify as load_math_verify


def verify_response(response: str, answer: str, max_chars: int, timeout_seconds: int = 5) -> float:
    """1.0 when math-verify finds ``response`` equal to ``answer``, else 0.0 (errors included)."""
    if response == "" or len(response) > max_chars:
        return 0.0
    math_verify = load_math_verify()
    try:  # no signal-based timeouts: scoring runs in a worker thread
        gold = math_verify.parse(f"\\boxed{{{answer}}}", parsing_timeout=None)
        given = math_verify.parse(f"\\boxed{{{response}}}", parsing_timeout=None)
        return float(math_verify.verify(gold, given, timeout_seconds=None))
    except Exception:
        return 0.0


class MathRubric(Rubric):
    """``vf.MathRubric()``: rewards a correct final answer (see the module)."""

    MAX_VERIFY_CHARS = 50_000

    def __init__(
        self,
        funcs: list[Any] | None = None,
        weights: list[float] | None = None,
        parser: Any = None,
        max_workers: int = 8,
        timeout_seconds: float = 5,
        max_verify_chars: int = MAX_VERIFY_CHARS,
    ) -> None:
        parser = parser or MaybeThinkParser(
            extract_fn=functools.partial(extract_boxed_answer, strict=True)
        )
        self.max_verify_chars = max_verify_chars
        self.timeout_seconds = timeout_seconds
        super().__init__(funcs=funcs, weights=weights, parser=parser)
        self.add_reward_func(self.correct_answer)

    async def correct_answer(
        self, parser: Any, completion: Any, answer: str, **kwargs: Any
    ) -> float:
        """Whether the final answer matches the reference (math-verify, in a worker thread)."""
        response = parser.parse_answer(completion) or ""
        return await asyncio.to_thread(
            verify_response, response, str(answer), self.max_verify_chars, int(self.timeout_seconds)
        )
