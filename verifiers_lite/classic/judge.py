"""Classic JudgeRubric: reward functions ask a judge model through the ``judge`` class object.

``vf.JudgeRubric(judge_client=AsyncOpenAI(...), judge_model=..., judge_prompt=...)`` offers its
reward functions ``judge`` (``await judge(prompt, completion, answer, state)`` returns the
judge's text), ``judge_client``, ``judge_model``, ``judge_prompt`` and ``judge_sampling_args``
by name, as verifiers 0.3.1 does. The judge prompt is formatted with ``question``, ``answer``
and ``response`` (the parser's answer). As in 0.3.1, ``question`` is the prompt itself for a
string prompt and empty for a message list (0.3.1 looked for a dict among its message objects),
so a judge sees the prompt it saw there. A state caches the judge's answer per prompt.
"""

from __future__ import annotations

from typing import Any

from verifiers_lite.classic.rubric import Rubric
from verifiers_lite.classic.utils import maybe_await
from verifiers_lite.core.model_client import OpenAIClientLike
from verifiers_lite.results.code_identity import code_hash

DEFAULT_JUDGE_PROMPT = """Given a ground truth answer \
and a response, determine if the response is correct.

Question:
```
{question}
```

Ground truth answer:
```
{answer}
```

Response:
```
{response}
```

Respond either "yes" or "no" only."""


def judge_request_args(sampling_args: dict[str, Any] | None) -> dict[str, Any]:
    """The judge's sampling args as the chat API takes them (``max_tokens`` sent as
    ``max_completion_tokens``; None values dropped)."""
    args = dict(sampling_args or {})
    if "max_tokens" in args:
        value = args.pop("max_tokens")
        if value is not None:
            args["max_completion_tokens"] = value
    return {k: v for k, v in args.items() if v is not None}


class JudgeRubric(Rubric):
    """A rubric whose reward functions may call ``judge`` (see the module)."""

    def __init__(
        self,
        parser: Any = None,
        parallelize_scoring: bool = False,
        judge_client: OpenAIClientLike | None = None,
        judge_model: str = "gpt-4.1-nano",
        judge_sampling_args: dict[str, Any] | None = None,
        judge_prompt: str = DEFAULT_JUDGE_PROMPT,
        **kwargs: Any,
    ) -> None:
        super().__init__(parser=parser, **kwargs)
        if judge_client is None:
            from openai import AsyncOpenAI

            # as classic: OPENAI_API_KEY / OPENAI_BASE_URL from the environment
            judge_client = AsyncOpenAI()
        self.judge_client = judge_client
        self.judge_model = judge_model
        self.judge_prompt = judge_prompt
        self.judge_sampling_args = judge_sampling_args or {}
        self.class_objects.update(
            judge=self.judge,
            judge_client=self.judge_client,
            judge_model=judge_model,
            judge_prompt=judge_prompt,
            judge_sampling_args=self.judge_sampling_args,
        )

    def fingerprint_extra(self) -> dict[str, Any]:
        """The judge's model, prompt and sampling decide its scores too (for resume)."""
        return {
            "judge_model": self.judge_model,
            "judge_prompt": self.judge_prompt,
            "judge_sampling_args": self.judge_sampling_args,
            "judge": code_hash(type(self).judge),
        }

    def judge_text(self, prompt: Any, completion: Any, answer: Any) -> str:
        """The prompt the judge is sent for this rollout."""
        question = prompt if isinstance(prompt, str) else ""
        response = self.parser.parse_answer(completion)
        return self.judge_prompt.format(question=question, answer=answer, response=response)

    async def judge(
        self, prompt: Any, completion: Any, answer: Any, state: dict[str, Any] | None = None
    ) -> str:
        """The judge's answer (text) about this rollout, cached on ``state`` per judge prompt."""
        text = self.judge_text(prompt, completion, answer)
        cached = state.get("judge_response") if state else None
        if isinstance(cached, dict) and text in cached:
            return str(cached[text])
        try:
            reply = await maybe_await(
                self.judge_client.chat.completions.create,
                model=self.judge_model,
                messages=[{"role": "user", "content": text}],
                **judge_request_args(self.judge_sampling_args),
            )
        except Exception as exc:
            raise RuntimeError(
                f"Unexpected error when calling judge model '{self.judge_model}'. Error: {exc}"
            ) from exc
        answer_text = str(reply.choices[0].message.content)
        if state is not None:
            state["judge_response"] = {
                **(cached if isinstance(cached, dict) else {}),
                text: answer_text,
            }
        return answer_text
