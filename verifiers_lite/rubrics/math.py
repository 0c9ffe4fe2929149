"""MathRubric: 1.0 when the completion's answer equals the gold answer mathematically.

Built on ``math-verify`` (Hugging Face's verifier of mathematical answers), so ``\\frac{1}{2}``,
``0.5`` and ``1/2`` agree, as do equivalent sets, intervals and expressions, where string
matching would not.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from verifiers_lite._util.extras import require
from verifiers_lite.core.messages import last_assistant_text
from verifiers_lite.parsers.parser import Parser
from verifiers_lite.rubrics.rubric import Rubric


class _NoTimeoutNotice(logging.Filter):
    """math-verify warns on every call made without its signal-based timeout; ours is a thread
    deadline (signals only work in the main thread, and runs happen on a background loop)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Timeout is disabled" not in record.getMessage()


def _math_verify() -> Any:
    math_verify = require("math_verify", "MathRubric", "math", package="math-verify")
    for name in ("math_verify.parser", "math_verify.grader"):
        log = logging.getLogger(name)
        if not any(isinstance(f, _NoTimeoutNotice) for f in log.filters):
            log.addFilter(_NoTimeoutNotice())
    return math_verify


def verify_answer(candidate: str | None, gold: Any) -> float:
    """1.0 when ``candidate`` (free text, LaTeX or a bare answer) states ``gold``, else 0.0."""
    if not candidate:
        return 0.0
    mv = _math_verify()
    gold_text = str(gold)
    # A bare gold answer ("\\{1, 2\\}", "\\frac{1}{2}") is LaTeX math: read it as such first.
    wrapped = gold_text if "$" in gold_text or "\\boxed" in gold_text else f"${gold_text}$"
    parsed_gold = mv.parse(wrapped, parsing_timeout=None) or mv.parse(
        gold_text, parsing_timeout=None
    )
    parsed = mv.parse(candidate, parsing_timeout=None)
    if not parsed_gold or not parsed:
        return 0.0
    return 1.0 if mv.verify(parsed_gold, parsed, timeout_seconds=None) else 0.0


class MathRubric(Rubric):
    """One reward function, ``math_verified`` (1/0): the parsed answer (``parser``; default the
    last assistant message) is mathematically equal to ``answer``. A check running past
    ``timeout`` seconds is a ``rubric_error`` row. More reward functions may be added.

    Args:
        parser: what reads the answer out of a completion (default: the last assistant message).
        weight: ``math_verified``'s weight in the reward.
        timeout: seconds one check may take.
        funcs: more reward functions after ``math_verified``.
        weights: their weights (default 1.0 each).
    """

    def __init__(
        self,
        parser: Parser | None = None,
        *,
        weight: float = 1.0,
        timeout: float = 5.0,
        funcs: list[Any] | None = None,
        weights: list[float] | None = None,
        **kwargs: Any,
    ) -> None:
        _math_verify()  # fail now, naming the extra, not at the first rollout
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        self.timeout = timeout

        async def math_verified(completion: Any, answer: Any, parser: Parser) -> float:
            """1.0 when the answer is mathematically equal to the gold answer."""
            candidate = parser.parse_answer(completion)
            if candidate is None and not isinstance(completion, str):
                candidate = last_assistant_text(completion)
            return await asyncio.wait_for(
                asyncio.to_thread(verify_answer, candidate, answer), self.timeout
            )

        extra = list(funcs or [])
        extra_w = list(weights) if weights is not None else [1.0] * len(extra)
        super().__init__([math_verified, *extra], [weight, *extra_w], parser=parser, **kwargs)
