"""A ``task`` column of plain strings (older classic code routed by it). verifiers 0.3.1 refuses
it when a rollout starts; ``fixed=True`` keeps the name in ``info`` instead."""

import verifiers as vf
from datasets import Dataset


def echoed(completion, answer, info) -> float:
    bonus = 0.5 if info.get("kind") == "math" else 0.0
    return float(answer in str(completion[-1].content or "")) + bonus


def load_environment(n: int = 6, fixed: bool = False) -> vf.SingleTurnEnv:
    rows = []
    for i in range(n):
        kind = "math" if i % 2 else "words"
        row = {"question": f"Say {i * 3 % 4} please.", "answer": str(i % 4), "info": {"kind": kind}}
        if not fixed:
            row["task"] = kind
        rows.append(row)
    return vf.SingleTurnEnv(dataset=Dataset.from_list(rows), rubric=vf.Rubric(funcs=[echoed]))
