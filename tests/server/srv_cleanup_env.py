"""A test environment (id ``srv_cleanup_env``) whose rubric's cleanup leaves a trace.

Each cleanup appends ``{"pid", "example_id", "rollout_index", "reward"}`` to ``log`` (a JSON
lines file), so a test can tell in which process cleanup ran, how often, and whether the
rollout was already scored then. Rewards depend on the rollout index and on an extra dataset
column (``bonus``, kept in ``info``), so they differ inside a group and across examples.
"""

from __future__ import annotations

import json
import os
from typing import Any

import verifiers_lite as vf


class TracingRubric(vf.Rubric):
    def __init__(self, log: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.log = log

    async def cleanup(self, state: dict[str, Any]) -> None:
        if self.log:
            with open(self.log, "a") as f:
                f.write(
                    json.dumps(
                        {
                            "pid": os.getpid(),
                            "example_id": state.get("example_id"),
                            "rollout_index": state.get("rollout_index"),
                            "reward": state.get("reward"),
                        }
                    )
                    + "\n"
                )


def correct(completion: Any, answer: str) -> float:
    return float(vf.extract_boxed_answer(completion[-1]["content"] or "") == answer)


def position(state: dict[str, Any], info: dict[str, Any]) -> float:
    return 0.1 * state["rollout_index"] + float(info["bonus"])


def load_environment(log: str = "", num_examples: int = 6) -> vf.SingleTurnEnv:
    rows = [
        {"question": f"What is {i} + {i + 3}?", "answer": str(2 * i + 3), "bonus": i % 2}
        for i in range(num_examples)
    ]
    rubric = TracingRubric(log, funcs=[correct, position], weights=[1.0, 1.0])
    return vf.SingleTurnEnv(dataset=rows, rubric=rubric, sampling_args={"temperature": 0})
