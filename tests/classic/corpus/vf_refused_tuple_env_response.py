"""Older classic code whose ``env_response`` returns ``(messages, state)``. verifiers 0.3.1 takes
messages only; ``fixed=True`` returns them alone and keeps the state in place."""

import verifiers as vf
from datasets import Dataset


class HintEnv(vf.MultiTurnEnv):
    def __init__(self, fixed: bool, **kwargs):
        super().__init__(**kwargs)
        self.fixed = fixed

    async def env_response(self, messages, state, **kwargs):
        state["hints"] = state.get("hints", 0) + 1
        reply = [{"role": "user", "content": f"Hint {state['hints']}: what is {state['answer']} + 0?"}]
        return reply if self.fixed else (reply, state)


def hinted(completion, answer, state) -> float:
    right = [answer in str(m.content or "") for m in completion if m.role == "assistant"]
    return sum(right) + 0.25 * state.get("hints", 0)


def load_environment(n: int = 6, fixed: bool = False) -> vf.MultiTurnEnv:
    rows = [{"question": f"What is {i} + {2 * i + 3}?", "answer": str(3 * i + 3)} for i in range(n)]
    return HintEnv(fixed, dataset=Dataset.from_list(rows), rubric=vf.Rubric(funcs=[hinted]), max_turns=2)
