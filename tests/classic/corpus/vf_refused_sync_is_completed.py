"""A MultiTurnEnv of older classic code: ``is_completed(messages, state)``, sync. verifiers 0.3.1
calls ``is_completed(state)`` and awaits it, so it refuses this; ``fixed=True`` is the 0.3.1
form."""

import verifiers as vf
from datasets import Dataset


def _answered(messages, answer) -> bool:
    last = messages[-1]
    return last.role == "assistant" and answer in str(last.content or "")


class RetryEnv(vf.MultiTurnEnv):
    def is_completed(self, messages, state, **kwargs) -> bool:
        return _answered(messages, state["answer"])

    async def env_response(self, messages, state, **kwargs):
        n = len(state["trajectory"])
        return [vf.UserMessage(content=f"Not quite ({n}). Again: {state['info']['question']}")]


class FixedRetryEnv(RetryEnv):
    async def is_completed(self, state, **kwargs) -> bool:
        if await vf.MultiTurnEnv.is_completed(self, state, **kwargs):
            return True
        steps = state["trajectory"]
        return bool(steps) and _answered(steps[-1]["completion"], state["answer"])


def fewer_tries(state) -> float:
    return 1.0 / len(state["trajectory"])


def load_environment(n: int = 6, fixed: bool = False) -> vf.MultiTurnEnv:
    rows = []
    for i in range(n):
        question = f"What is {i + 2} + {3 * i + 1}?"
        rows.append({"question": question, "answer": str(4 * i + 3), "info": {"question": question}})
    cls = FixedRetryEnv if fixed else RetryEnv
    return cls(dataset=Dataset.from_list(rows), rubric=vf.Rubric(funcs=[fewer_tries]), max_turns=4)
