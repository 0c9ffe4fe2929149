"""Small environments shared by the tests: arithmetic questions with a \\boxed{} reward, and an
EnvGroup of two members (sums and products) whose rubrics disagree."""

from __future__ import annotations

import verifiers_lite as vf


def arithmetic_rows(n: int) -> list[dict]:
    return [{"question": f"What is {i} + {i % 7}?", "answer": str(i + i % 7)} for i in range(n)]


def products_rows(n: int) -> list[dict]:
    return [{"question": f"What is {i} * 3?", "answer": str(i * 3)} for i in range(n)]


def boxed_correct(completion, answer) -> float:
    return 1.0 if vf.extract_boxed_answer(completion[-1]["content"] or "") == answer else 0.0


def boxed_off_by(completion, answer) -> float:
    """A different reward: 1 - |error| / 10, floored at 0 (so the two rubrics disagree)."""
    got = vf.extract_boxed_answer(completion[-1]["content"] or "")
    return max(0.0, 1.0 - abs(int(got) - int(answer)) / 10) if got else 0.0


def make_env(n: int = 10, **kwargs) -> vf.SingleTurnEnv:
    return vf.SingleTurnEnv(dataset=arithmetic_rows(n), rubric=vf.Rubric([boxed_correct]), **kwargs)


def sums_env(n: int = 6) -> vf.SingleTurnEnv:
    return vf.SingleTurnEnv(
        dataset=arithmetic_rows(n), system_prompt="Add.", rubric=vf.Rubric([boxed_correct])
    )


def products_env(n: int = 4) -> vf.SingleTurnEnv:
    return vf.SingleTurnEnv(
        dataset=products_rows(n),
        system_prompt="Multiply.",
        rubric=vf.Rubric([boxed_off_by], pass_criterion=0.9),
    )


def group(n_sums: int = 6, n_products: int = 4) -> vf.EnvGroup:
    return vf.EnvGroup([sums_env(n_sums), products_env(n_products)], names=["sums", "products"])
