"""reasoning_gym: any reasoning-gym task by name, single turn, scored by reasoning-gym itself.

Measures whatever the chosen task measures (``chain_sum``: multi-term addition and subtraction;
``countdown``: reaching a target with given numbers; ``gsm_symbolic``: grade-school word
problems; ``spell_backward``, ``word_sorting``, ... 100+ families). reasoning-gym generates the
data offline and deterministically per seed, and each task's own ``score_answer`` gives the
reward (partial credit where the task has it), so rewards lie in [0, 1].

The model is asked for its final answer inside ``<answer></answer>``; failing that, a
``\\boxed{}`` answer or the last non-empty line is scored. ``scorer="math"`` scores numeric and
symbolic tasks by mathematical equality with the gold answer (``vf.MathRubric``, math-verify)
instead of the task's own scorer.
"""

from __future__ import annotations

import re
from typing import Any

import verifiers_lite as vf
from verifiers_lite._util.extras import require
from verifiers_lite.core.messages import Messages, last_assistant_text

SYSTEM_PROMPT = (
    "Solve the problem. Think briefly, then give only your final answer inside "
    "<answer></answer> tags, e.g. <answer>42</answer>."
)
_ANSWER_TAG = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.DOTALL | re.IGNORECASE)


class AnswerTagParser(vf.Parser):
    """``<answer>X</answer>`` (last one), else ``\\boxed{X}``, else the last non-empty line."""

    def parse(self, text: str) -> str:
        return self.parse_answer(text) or ""

    def parse_answer(self, completion: Messages | str) -> str | None:
        text = completion if isinstance(completion, str) else last_assistant_text(completion)
        tagged = _ANSWER_TAG.findall(text or "")
        if tagged:
            return tagged[-1].strip()
        boxed = vf.extract_boxed_answer(text or "")
        if boxed is not None:
            return boxed
        lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
        return lines[-1] if lines else None


def load_environment(
    task: str = "chain_sum",
    num_examples: int = 50,
    seed: int = 0,
    system_prompt: str = SYSTEM_PROMPT,
    max_tokens: int = 256,
    scorer: str = "reasoning_gym",
    **task_kwargs: Any,
) -> vf.SingleTurnEnv:
    """Build an environment over reasoning-gym task ``task``.

    Args:
        task: a reasoning-gym dataset name (``chain_sum``, ``countdown``, ``gsm_symbolic``, ...).
        num_examples: examples generated.
        seed: reasoning-gym's seed (same seed, same examples).
        system_prompt: the system message.
        max_tokens: default completion budget.
        scorer: ``"reasoning_gym"`` (the task's own ``score_answer``) or ``"math"`` (math-verify).
        **task_kwargs: the task's own options, e.g. ``min_terms=2, max_terms=2, max_digits=1``
            for ``chain_sum``.
    """
    rg = require("reasoning_gym", "the reasoning_gym environment", "envs", package="reasoning-gym")
    if num_examples < 1:
        raise ValueError(f"num_examples must be >= 1, got {num_examples}")
    if scorer not in ("reasoning_gym", "math"):
        raise ValueError(f"scorer must be 'reasoning_gym' or 'math', got {scorer!r}")
    try:
        data = rg.create_dataset(task, size=num_examples, seed=seed, **task_kwargs)
    except Exception as exc:  # unknown task names and bad options come back as assorted errors
        raise ValueError(
            f"reasoning-gym could not build task {task!r} with {task_kwargs}: {exc}"
        ) from exc
    entries = [data[i] for i in range(num_examples)]

    def rows() -> list[dict[str, Any]]:
        return [
            {
                "example_id": i,
                "question": e["question"],
                "answer": str(e["answer"]),
                "info": {"rg_task": task, "rg_index": i},
                "task": task,
            }
            for i, e in enumerate(entries)
        ]

    parser = AnswerTagParser()
    rubric = _rubric(scorer, data, entries, parser)
    return vf.SingleTurnEnv(
        dataset=rows,
        system_prompt=system_prompt,
        parser=parser,
        rubric=rubric,
        sampling_args={"max_tokens": max_tokens},
    )


def _rubric(scorer: str, data: Any, entries: list[Any], parser: vf.Parser) -> vf.Rubric:
    """The reward (reasoning-gym's own scorer, or math-verify's) and the answer format (0)."""

    def rg_score(completion: Any, info: dict[str, Any], parser: vf.Parser) -> float:
        """reasoning-gym's own score of the parsed answer (0 when none could be parsed)."""
        answer = parser.parse_answer(completion)
        if answer is None:
            return 0.0
        score = data.score_answer(answer=answer, entry=entries[int(info["rg_index"])])
        return min(1.0, max(0.0, float(score or 0.0)))

    def answer_tag(completion: Any) -> float:
        """1.0 when the model used the <answer></answer> format."""
        return 1.0 if _ANSWER_TAG.search(last_assistant_text(completion) or "") else 0.0

    if scorer == "math":
        return vf.MathRubric(parser=parser, funcs=[answer_tag], weights=[0.0])
    return vf.Rubric([rg_score, answer_tag], weights=[1.0, 0.0], parser=parser)
