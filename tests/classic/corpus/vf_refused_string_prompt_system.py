"""String prompts with a ``system_prompt``. verifiers 0.3.1 refuses them (it prepends the system
prompt to message lists only); ``fixed=True`` gives the prompt as one user message."""

import verifiers as vf
from datasets import Dataset


def echoed(completion, answer) -> float:
    return float(answer in str(completion[-1].content or ""))


def load_environment(n: int = 6, fixed: bool = False) -> vf.SingleTurnEnv:
    rows = []
    for i in range(n):
        text = f"Spell the number {i % 4}."
        rows.append({"prompt": [{"role": "user", "content": text}] if fixed else text, "answer": str(i % 2)})
    return vf.SingleTurnEnv(
        dataset=Dataset.from_list(rows), system_prompt="Answer in one word.", rubric=vf.Rubric(funcs=[echoed])
    )
