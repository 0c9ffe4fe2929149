"""A test environment (id ``srv_graded_env``) whose grader can be slow or remove its sample."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import verifiers_lite as vf


def load_environment(grade_sec: float = 0.0, remove: bool = False) -> vf.SingleTurnEnv:
    """Questions ``What is A + B?``; reward 1.0 when the completion's \\boxed{} holds the answer."""

    async def boxed_answer(completion: Any, answer: str, state: dict[str, Any]) -> float:
        await asyncio.sleep(grade_sec)
        if remove:
            state["remove_sample"] = True
        text = completion[-1]["content"] if isinstance(completion, list) else str(completion)
        found = re.findall(r"\\boxed\{(-?\d+)\}", text or "")
        return 1.0 if found and found[-1] == answer else 0.0

    rows = [{"question": f"What is {a} + {a + 1}?", "answer": str(2 * a + 1)} for a in range(5)]
    return vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric([boxed_answer]))
