"""Small environments shared by the core tests."""

from __future__ import annotations

import verifiers_lite as vf


def arithmetic_rows(n: int) -> list[dict]:
    return [{"question": f"What is {i} + {i % 7}?", "answer": str(i + i % 7)} for i in range(n)]


def boxed_correct(completion, answer) -> float:
    return 1.0 if vf.extract_boxed_answer(completion[-1]["content"] or "") == answer else 0.0


def make_env(n: int = 10, **kwargs) -> vf.SingleTurnEnv:
    return vf.SingleTurnEnv(dataset=arithmetic_rows(n), rubric=vf.Rubric([boxed_correct]), **kwargs)
