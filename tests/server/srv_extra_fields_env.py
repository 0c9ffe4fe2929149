"""A test environment (id ``srv_extra_fields_env``): reward 1.0 when the completion's \\boxed{}
holds the answer; the metric ``extra_echo`` (weight 0) reports ``info["extra_fields"]["echo"]``
as the rollout saw it (-1 when the request sent no extra_fields)."""

from __future__ import annotations

import re
from typing import Any

import verifiers_lite as vf


def load_environment() -> vf.SingleTurnEnv:
    def boxed_answer(completion: Any, answer: str) -> float:
        found = re.findall(r"\\boxed\{(-?\d+)\}", completion[-1]["content"] or "")
        return 1.0 if found and found[-1] == answer else 0.0

    def extra_echo(info: dict[str, Any]) -> float:
        return float((info.get("extra_fields") or {}).get("echo", -1))

    rows = [{"question": f"What is {a} + {a + 1}?", "answer": str(2 * a + 1)} for a in range(5)]
    return vf.SingleTurnEnv(
        dataset=rows, rubric=vf.Rubric([boxed_answer, extra_echo], weights=[1.0, 0.0])
    )
