"""guess_number: a multi-turn game: guess a secret number from "higher"/"lower" feedback.

Measures whether a model uses feedback over several turns: it must keep its guesses inside the
range the hints leave open, and finish in few turns. The secret numbers come from a seeded
generator (same seed, same games).

Reward: solved, scaled down linearly with turns used: 1.0 for a first-guess hit, 0.5 for a hit
on the last allowed turn, 0 when unsolved. Metrics (weight 0): ``solved``, ``guesses``.
Pass criterion (pass@k): ``solved`` >= 1.
"""

from __future__ import annotations

import random
from typing import Any

import verifiers_lite as vf
from verifiers_lite.core.messages import Messages, last_assistant_text
from verifiers_lite.core.state import State

from ._common import NumberParser, parse_number

PROMPT = (
    "I am thinking of a whole number between {low} and {high}. Guess it. After each guess I "
    "tell you whether my number is higher or lower. Reply with just your guess."
)


class GuessNumberEnv(vf.MultiTurnEnv):
    """The environment answers each guess with "Higher." or "Lower." until it is right."""

    async def is_completed(self, messages: Messages, state: State) -> bool:
        guess = parse_number(last_assistant_text(messages))
        if guess is not None and guess == str(state["info"]["secret"]):
            state["solved"] = True
            return True
        return False

    async def env_response(self, messages: Messages, state: State) -> Messages:
        info = state["info"]
        guess = parse_number(last_assistant_text(messages))
        if guess is None:
            text = (
                f"Please reply with a single whole number between {info['low']} and {info['high']}."
            )
        else:
            text = "Higher." if float(guess) < info["secret"] else "Lower."
        return [{"role": "user", "content": text}]


def make_rows(num_examples: int, seed: int, low: int, high: int) -> list[dict[str, Any]]:
    """Deterministic secrets for ``seed``."""
    rng = random.Random(seed)
    rows = []
    for i in range(num_examples):
        secret = rng.randint(low, high)
        rows.append(
            {
                "example_id": i,
                "question": PROMPT.format(low=low, high=high),
                "answer": str(secret),
                "info": {"secret": secret, "low": low, "high": high},
                "task": "guess_number",
            }
        )
    return rows


def load_environment(
    num_examples: int = 50,
    seed: int = 0,
    low: int = 1,
    high: int = 20,
    max_turns: int = 6,
    max_tokens: int = 16,
) -> GuessNumberEnv:
    """Build the game.

    Args:
        num_examples: games generated.
        seed: generator seed (same seed, same secrets).
        low, high: the inclusive range of secrets (told to the model).
        max_turns: guesses allowed (bisection needs ceil(log2(high - low + 2))).
        max_tokens: completion budget per guess.
    """
    if num_examples < 1:
        raise ValueError(f"num_examples must be >= 1, got {num_examples}")
    if high <= low:
        raise ValueError(f"high must be > low, got low={low}, high={high}")
    if max_turns < 1:
        raise ValueError(f"max_turns must be >= 1, got {max_turns}")

    def solved(state: State) -> float:
        """1.0 when the secret was found."""
        return 1.0 if state.get("solved") else 0.0

    def guesses(state: State) -> float:
        """Model turns taken."""
        return float(state.get("turns") or 0)

    def efficient_win(state: State) -> float:
        """Solved, worth less the more turns it took (1.0 first turn, 0.5 last allowed turn)."""
        if not state.get("solved"):
            return 0.0
        if max_turns == 1:
            return 1.0
        return 1.0 - 0.5 * (int(state["turns"]) - 1) / (max_turns - 1)

    parser = NumberParser()
    # A win after the first guess scores below 1, so "solved" (not reward >= 1) decides pass@k.
    rubric = vf.Rubric(
        [efficient_win, solved, guesses],
        weights=[1.0, 0.0, 0.0],
        parser=parser,
        pass_criterion="solved",
    )
    return GuessNumberEnv(
        dataset=lambda: make_rows(num_examples, seed, low, high),
        parser=parser,
        rubric=rubric,
        max_turns=max_turns,
        sampling_args={"max_tokens": max_tokens},
    )
