"""A dataset given as a plain list of rows (older classic code; the guide of verifiers_lite once
showed it). verifiers 0.3.1 refuses it; ``fixed=True`` is the same environment written for
0.3.1 (``Dataset.from_list``)."""

import verifiers as vf
from datasets import Dataset


def echoed(completion, answer) -> float:
    return float(answer in str(completion[-1].content or ""))


def load_environment(n: int = 6, fixed: bool = False) -> vf.SingleTurnEnv:
    rows = [{"question": f"Repeat the word w{i * 7 % 5}.", "answer": f"w{i % 3}"} for i in range(n)]
    dataset = Dataset.from_list(rows) if fixed else rows
    return vf.SingleTurnEnv(dataset=dataset, rubric=vf.Rubric(funcs=[echoed]))
