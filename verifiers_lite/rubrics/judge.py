"""JudgeRubric: an LLM grades each completion; its parsed verdict is a reward like any other.

The judge's raw answer and parsed score are kept on the row (``row["judge"]``); the score is also
the ``judge_score`` metric, so weights, pass criteria and group advantages work as usual. Judge
calls go through a :class:`ModelClient` (retries per its :class:`RetryPolicy`), under their own
concurrency limit, optionally through the response cache. A judge that fails or answers
something unparseable makes that rollout a ``rubric_error`` row; the run goes on.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any, cast

from verifiers_lite.clients.retry import RetryPolicy
from verifiers_lite.core.messages import last_assistant_text
from verifiers_lite.core.model_client import ModelClient, ModelClientLike
from verifiers_lite.parsers.parser import Parser
from verifiers_lite.results.code_identity import code_hash
from verifiers_lite.rubrics.rubric import Rubric

DEFAULT_JUDGE_PROMPT = (
    "You are grading a response to a question against the reference answer.\n"
    "Question: {question}\n"
    "Reference answer: {answer}\n"
    "Response: {response}\n"
    "Does the response give the reference answer? Reply with one word: yes or no."
)
DEFAULT_JUDGE_SAMPLING: dict[str, Any] = {"temperature": 0.0, "max_tokens": 8}
_VERDICT = re.compile(r"\b(yes|no|correct|incorrect)\b", re.IGNORECASE)


def parse_yes_no(text: str) -> float:
    """1.0 for a first verdict word of yes/correct, 0.0 for no/incorrect; ValueError otherwise."""
    match = _VERDICT.search(text or "")
    if match is None:
        raise ValueError(f"judge answer has no yes/no verdict: {text[:200]!r}")
    return 1.0 if match.group(1).lower() in ("yes", "correct") else 0.0


def _last_user_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    users = [m for m in prompt or [] if isinstance(m, dict) and m.get("role") == "user"]
    return str(users[-1].get("content") or "") if users else ""


class JudgeRubric(Rubric):
    """``JudgeRubric(judge_client, judge_model, prompt=..., parse=...)``.

    ``prompt`` is formatted with ``question`` (the last user message), ``answer`` (the
    reference), ``response`` (the parsed answer, else the last assistant message) and
    ``completion`` (the last assistant message). ``parse`` turns the judge's text into a float
    (default :func:`parse_yes_no`). ``judge_client`` is any model client (or a base URL); None
    uses the embedded model (started on first use; no key needed). ``max_concurrent`` bounds
    judge calls in flight; ``cache`` (True or a path) caches judge answers; ``retry`` is the
    policy a base-URL judge client is built with. More reward functions may be added.

    Args:
        judge_client: the judge's model client or base URL; None: the embedded model.
        judge_model: the model the judge server serves (needed with ``judge_client``).
        prompt: the judge's prompt (above); it holds ``{response}`` or ``{completion}``.
        parse: the judge's text to a float (default :func:`parse_yes_no`).
        parser: what reads the answer out of a completion (``response`` in the prompt).
        judge_sampling_args: how the judge samples (default: greedy and short).
        max_concurrent: judge calls in flight at most.
        weight: the judge score's weight in the reward.
        cache: ``True`` or a file path: judge answers are cached.
        retry: the retry policy of a judge client built from a base URL.
        funcs: more reward functions after the judge's.
        weights: their weights (default 1.0 each).
    """

    def __init__(
        self,
        judge_client: ModelClientLike | None = None,
        judge_model: str | None = None,
        prompt: str = DEFAULT_JUDGE_PROMPT,
        parse: Callable[[str], float] = parse_yes_no,
        *,
        parser: Parser | None = None,
        judge_sampling_args: dict[str, Any] | None = None,
        max_concurrent: int = 8,
        weight: float = 1.0,
        cache: Any = None,
        retry: RetryPolicy | None = None,
        funcs: list[Any] | None = None,
        weights: list[float] | None = None,
        **kwargs: Any,
    ) -> None:
        if judge_client is not None and not judge_model:
            raise ValueError(
                "JudgeRubric: give judge_model with judge_client (the model the judge server serves)"
            )
        if max_concurrent < 1:
            raise ValueError(f"JudgeRubric: max_concurrent must be >= 1, got {max_concurrent}")
        if not callable(parse):
            raise TypeError(f"JudgeRubric: parse must be callable (text -> float), got {parse!r}")
        missing = [k for k in ("{response}",) if k not in prompt and "{completion}" not in prompt]
        if missing:
            raise ValueError(
                "JudgeRubric: prompt must contain {response} or {completion} (what is graded)"
            )
        self.judge_model = judge_model
        self.prompt = prompt
        self.parse = parse
        self.judge_sampling_args = dict(
            DEFAULT_JUDGE_SAMPLING if judge_sampling_args is None else judge_sampling_args
        )
        self.max_concurrent = max_concurrent
        self._client_arg = judge_client
        self._cache_arg = cache
        self._retry = retry
        self._client: ModelClient | None = None
        self._model = judge_model
        self._semaphores: dict[int, asyncio.Semaphore] = {}  # one per event loop
        extra = list(funcs or [])
        extra_w = list(weights) if weights is not None else [1.0] * len(extra)
        super().__init__([self.judge_score, *extra], [weight, *extra_w], parser=parser, **kwargs)

    def fingerprint_extra(self) -> dict[str, Any]:
        """What else decides this rubric's scores (for resume): judge model, prompt, the parse
        function's code, sampling."""
        return {
            "judge_model": self.judge_model,
            "prompt": self.prompt,
            "parse": [
                getattr(self.parse, "__qualname__", type(self.parse).__qualname__),
                code_hash(self.parse),
            ],
            "judge_sampling_args": self.judge_sampling_args,
        }

    async def _judge(self) -> tuple[ModelClient, str]:
        if self._client is None:
            from verifiers_lite.clients.cache import CachedClient
            from verifiers_lite.clients.http import ChatClient
            from verifiers_lite.clients.resolve import as_model_client

            client = self._client_arg
            if client is None:
                from verifiers_lite.local.supervisor import local_model_client

                client, self._model = await asyncio.to_thread(local_model_client)
            elif isinstance(client, str):
                client = ChatClient(client, retry=self._retry)
            model_client = as_model_client(cast(ModelClientLike, client))  # None replaced above
            if self._cache_arg not in (None, False):
                model_client = CachedClient(model_client, self._cache_arg)
            self._client = model_client
        assert self._model is not None
        return self._client, self._model

    def _semaphore(self) -> asyncio.Semaphore:
        key = id(asyncio.get_running_loop())
        sem = self._semaphores.get(key)
        if sem is None:
            sem = self._semaphores[key] = asyncio.Semaphore(self.max_concurrent)
        return sem

    async def judge_score(
        self, prompt: Any, completion: Any, answer: Any, state: dict[str, Any], parser: Parser
    ) -> float:
        """Ask the judge about this rollout; keep its raw answer and parsed score on the row."""
        text = last_assistant_text(completion) if not isinstance(completion, str) else completion
        response = parser.parse_answer(completion) or text
        message = self.prompt.format(
            question=_last_user_text(prompt), answer=answer, response=response, completion=text
        )
        client, model = await self._judge()
        async with self._semaphore():
            reply = await client.chat(
                model, [{"role": "user", "content": message}], self.judge_sampling_args or None
            )
        state["judge"] = {"model": model, "response": reply.content, "score": None}
        score = float(self.parse(reply.content))
        state["judge"]["score"] = score
        return score
