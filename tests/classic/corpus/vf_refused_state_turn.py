"""Older classic code reading ``state["turn"]`` (verifiers before 0.2 kept it). verifiers 0.3.1
keeps no such key; ``fixed=True`` counts the turns with ``len(state["trajectory"])``."""

import re

import verifiers as vf
from datasets import Dataset


class TurnEnv(vf.MultiTurnEnv):
    def __init__(self, fixed: bool, **kwargs):
        super().__init__(**kwargs)
        self.fixed = fixed

    async def env_response(self, messages, state, **kwargs):
        turn = len(state["trajectory"]) if self.fixed else state["turn"]
        return [vf.UserMessage(content=f"Turn {turn}: what is {turn} + {turn + 4}?")]


def right_answers(prompt, completion) -> float:
    messages = list(prompt) + list(completion)
    score = 0.0
    for asked, reply in zip(messages, messages[1:]):
        if asked.role == "user" and reply.role == "assistant":
            a, b = re.findall(r"(\d+) \+ (\d+)", str(asked.content))[-1]
            score += float(str(int(a) + int(b)) in str(reply.content or ""))
    return score


def load_environment(n: int = 6, fixed: bool = False) -> vf.MultiTurnEnv:
    rows = [{"question": f"What is {i} + {i + 5}?", "answer": str(2 * i + 5)} for i in range(n)]
    return TurnEnv(fixed, dataset=Dataset.from_list(rows), rubric=vf.Rubric(funcs=[right_answers]), max_turns=3)
