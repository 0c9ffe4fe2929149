"""An environment author's code as the viewer and notebook tests run it: a bug in
``env_response`` (example 1 only: a key nothing put on the state) and a reward function that
explains its score with ``vf.Score``."""

from __future__ import annotations

from typing import Any

import verifiers_lite as vf


class HintEnv(vf.MultiTurnEnv):
    async def env_response(self, messages: Any, state: Any) -> Any:
        if state["example_id"] == 1:
            return [{"role": "user", "content": state["hints"][0]}]  # the bug
        return [{"role": "user", "content": "Say it once more."}]


def said_answer(completion: Any, answer: str) -> vf.Score:
    text = completion[-1]["content"] or ""
    return vf.Score(float(answer in text), f"looked for {answer!r} in the last reply")


def hint_env() -> HintEnv:
    rows = [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(2)]
    return HintEnv(dataset=rows, rubric=vf.Rubric([said_answer]), max_turns=2)
