"""arithmetic: one-step integer arithmetic, single turn.

Measures whether a model computes ``a op b`` correctly. The data are generated offline by a
seeded generator (same seed, same questions). The defaults (one-digit operands, ``+ - *``, two
worked examples as few-shot turns, their operands as long as the questions') are sized so that
the embedded SmolLM2-135M gets roughly half right (measured: ~0.58; one-digit additions alone
~0.95, two-digit additions 0.275 on 50 validation questions x 4 rollouts, 0.155 with one-digit
worked examples): real, varied rewards. The answer is the number the model states after
``=``/``is`` (or in ``\\boxed{}``), else its last number.

Reward: ``correct`` (1/0). Metric (weight 0): ``answered`` (a number could be read at all).
With ``scorer="math"`` the reward is ``math_verified`` (``vf.MathRubric``: mathematical equality
by math-verify) instead of string equality of the parsed numbers.

``split="train"|"validation"|"test"`` draws distinct questions from a third of all questions,
fixed by a hash of the question's text, so the three splits never share a question whatever
their seeds (one-digit subtraction has only 100 questions: seeds alone would repeat them).
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

import verifiers_lite as vf

from ._common import NumberParser, answered, exact_number_reward

SYSTEM_PROMPT = "Solve the arithmetic problem. Reply with the equation and its result."
OPERATIONS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
SPLITS = ("train", "validation", "test")
ENUMERATE_UP_TO = 100_000  # question spaces this small are listed; larger ones are sampled


def few_shot(operations: str, digits: int = 1) -> list[dict[str, str]]:
    """Two worked examples, in the format the parser reads, with ``digits``-digit operands (a
    carry in the second from two digits on: the model copies the examples' length)."""
    if digits == 1:
        pairs = [(2, 3), (7, 1)]
    else:
        pairs = [(int("2" + "4" * (digits - 1)), int("1" + "3" * (digits - 1)))]
        pairs.append((int("5" + "8" * (digits - 1)), int("3" + "7" * (digits - 1))))
    shots = []
    for (a, b), op in zip(pairs, (operations[0], operations[-1]), strict=True):
        shots += [
            {"role": "user", "content": f"What is {a} {op} {b}?"},
            {"role": "assistant", "content": f"{a} {op} {b} = {OPERATIONS[op](a, b)}"},
        ]
    return shots


def question_split(a: int, op: str, b: int) -> str:
    """The split ``a op b`` belongs to (a stable hash of its text, not Python's salted one)."""
    digest = hashlib.sha256(f"{a} {op} {b}".encode()).digest()
    return SPLITS[int.from_bytes(digest[:8], "big") % len(SPLITS)]


def _split_questions(
    rng: random.Random, num_examples: int, hi: int, operations: str, split: str
) -> list[tuple[int, str, int]]:
    """At most ``num_examples`` distinct questions of ``split``, in ``rng``'s order."""
    if (hi + 1) ** 2 * len(operations) <= ENUMERATE_UP_TO:
        pool = [
            (a, op, b)
            for op in sorted(set(operations))
            for a in range(hi + 1)
            for b in range(hi + 1)
            if question_split(a, op, b) == split
        ]
        rng.shuffle(pool)
        return pool[:num_examples]
    seen: dict[tuple[int, str, int], None] = {}
    for _ in range(100 * num_examples):  # a third of a space of > 10**5: few draws are wasted
        q = (rng.randint(0, hi), rng.choice(operations), rng.randint(0, hi))
        if question_split(*q) == split:
            seen.setdefault(q)
            if len(seen) == num_examples:
                break
    return list(seen)


def make_rows(
    num_examples: int,
    seed: int,
    digits: int,
    operations: str,
    split: str | None = None,
    skip: int = 0,
) -> list[dict[str, Any]]:
    """Deterministic questions for ``seed`` (``split``: distinct questions of that split), the
    first ``skip`` of the draw left out."""
    rng = random.Random(seed)
    hi = 10**digits - 1
    if split is None:
        questions = []
        for _ in range(skip + num_examples):
            a, b, op = rng.randint(0, hi), rng.randint(0, hi), rng.choice(operations)
            questions.append((a, op, b))
    else:
        questions = _split_questions(rng, skip + num_examples, hi, operations, split)
    questions = questions[skip:]
    rows = []
    for i, (a, op, b) in enumerate(questions):
        rows.append(
            {
                "example_id": i,
                "question": f"What is {a} {op} {b}?",
                "answer": str(OPERATIONS[op](a, b)),
                "info": {"a": a, "b": b, "op": op},
                "task": "arithmetic",
            }
        )
    return rows


def correct(completion: Any, answer: str, parser: vf.Parser) -> float:
    """1.0 when the stated result equals the true one."""
    return exact_number_reward(completion, answer, parser)


def load_environment(
    num_examples: int = 100,
    seed: int = 0,
    digits: int = 1,
    operations: str = "+-*",
    use_few_shot: bool = True,
    system_prompt: str = SYSTEM_PROMPT,
    max_tokens: int = 16,
    scorer: str = "exact",
    split: str | None = None,
    skip: int = 0,
) -> vf.SingleTurnEnv:
    """Build the arithmetic environment.

    Args:
        num_examples: questions generated.
        seed: generator seed (same seed, same questions).
        digits: operand size (1: 0..9, 2: 0..99, ...).
        operations: which of ``+ - *`` to draw from, e.g. ``"+-"``.
        use_few_shot: prepend two worked examples (small models need them to answer briefly).
        system_prompt: the system message.
        max_tokens: default completion budget (short answers are all this task needs).
        scorer: ``"exact"`` (parsed number equals the answer) or ``"math"`` (math-verify).
        split: None (any question, repeats possible) or ``"train"``, ``"validation"``,
            ``"test"``: distinct questions of that third only (fewer than ``num_examples`` when
            the third has fewer).
        skip: leave out the first ``skip`` questions of the draw (the same seed and split with
            ``skip=n`` continues where ``num_examples=n`` stopped: disjoint sets of one split).
    """
    if num_examples < 1:
        raise ValueError(f"num_examples must be >= 1, got {num_examples}")
    if skip < 0:
        raise ValueError(f"skip must be >= 0, got {skip}")
    if digits < 1:
        raise ValueError(f"digits must be >= 1, got {digits}")
    bad = set(operations) - set(OPERATIONS)
    if not operations or bad:
        raise ValueError(f"operations must be made of {sorted(OPERATIONS)}, got {operations!r}")
    if scorer not in ("exact", "math"):
        raise ValueError(f"scorer must be 'exact' or 'math', got {scorer!r}")
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be None or one of {SPLITS}, got {split!r}")
    parser = NumberParser()
    if scorer == "math":
        rubric: vf.Rubric = vf.MathRubric(parser=parser, funcs=[answered], weights=[0.0])
    else:
        rubric = vf.Rubric([correct, answered], weights=[1.0, 0.0], parser=parser)
    return vf.SingleTurnEnv(
        dataset=lambda: make_rows(num_examples, seed, digits, operations, split, skip),
        system_prompt=system_prompt,
        few_shot=few_shot(operations, digits) if use_few_shot else None,
        parser=parser,
        rubric=rubric,
        sampling_args={"max_tokens": max_tokens},
    )
