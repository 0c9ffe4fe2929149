"""``vf.UserMessage`` objects inside ``Dataset.from_list``: Arrow cannot hold them, under
verifiers 0.3.1 as here; ``fixed=True`` writes the same prompts as plain dicts."""

import verifiers as vf
from datasets import Dataset


def echoed(completion, answer) -> float:
    return float(answer in str(completion[-1].content or ""))


def load_environment(n: int = 6, fixed: bool = False) -> vf.SingleTurnEnv:
    rows = []
    for i in range(n):
        text = f"Repeat {i % 3}."
        message = {"role": "user", "content": text} if fixed else vf.UserMessage(content=text)
        rows.append({"prompt": [message], "answer": str(i % 2)})
    return vf.SingleTurnEnv(dataset=Dataset.from_list(rows), rubric=vf.Rubric(funcs=[echoed]))
