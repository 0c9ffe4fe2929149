import re

import verifiers as vf
from datasets import Dataset

SYSTEM_PROMPT = """You are playing a word game: guess the secret five-letter word.
After each guess you get feedback, one letter per position: G (right letter, right place),
Y (in the word, elsewhere), X (not in the word).

Think briefly, then give your guess inside <guess>...</guess> tags."""

SECRETS = ["crane", "ghost", "lemon", "quilt", "slate", "vapor"]


def score_guess(guess: str, secret: str) -> str:
    marks = []
    for i, ch in enumerate(guess):
        if i < len(secret) and secret[i] == ch:
            marks.append("G")
        elif ch in secret:
            marks.append("Y")
        else:
            marks.append("X")
    return " ".join(marks)


class WordGuessEnv(vf.MultiTurnEnv):
    async def setup_state(self, state: vf.State, **kwargs) -> vf.State:
        state["secret"] = state["answer"]
        state["guesses"] = []
        state["solved"] = False
        return await super().setup_state(state, **kwargs)

    @vf.stop
    async def solved(self, state: vf.State) -> bool:
        return state["solved"]

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs) -> vf.Messages:
        guess = (self.parser.parse_answer(messages) or "").strip().lower()
        state["guesses"].append(guess)
        if guess == state["secret"]:
            state["solved"] = True
            reply = [{"role": "user", "content": f"Correct! The word was {guess}."}]
            state["final_env_response"] = reply
            return reply
        feedback = score_guess(guess, state["secret"])
        left = self.max_turns - len(state["guesses"])
        return [{"role": "user", "content": f"Guess: {guess}\n{feedback}\nYou have {left} guesses left."}]


def correct_answer(parser, completion, answer, **kwargs) -> float:
    guess = parser.parse_answer(completion) or ""
    return 1.0 if guess.strip().lower() == answer else 0.0


def partial_credit(parser, completion, answer, **kwargs) -> float:
    for message in reversed(parser.get_user_messages(completion)):
        lines = message["content"].strip().split("\n")
        if len(lines) == 3 and re.fullmatch(r"[GYX ]+", lines[1].strip()):
            marks = lines[1].split()
            return 0.2 * marks.count("G") + 0.1 * marks.count("Y")
    return 0.0


def guesses_used(state, **kwargs) -> float:
    return float(len(state["guesses"]))


def load_environment(max_turns: int = 4, **kwargs):
    dataset = Dataset.from_list(
        [{"question": f"Game {i + 1}: make your first guess.", "answer": w} for i, w in enumerate(SECRETS)]
    )
    parser = vf.XMLParser(fields=["think", "guess"], answer_field="guess")
    rubric = vf.Rubric(parser=parser)
    rubric.add_reward_func(correct_answer)
    rubric.add_reward_func(partial_credit)
    format_reward = parser.get_format_reward_func()
    format_reward.__name__ = "format_reward"
    rubric.add_reward_func(format_reward, weight=0.2)
    rubric.add_metric(guesses_used)
    return WordGuessEnv(
        dataset=dataset,
        system_prompt=SYSTEM_PROMPT,
        parser=parser,
        rubric=rubric,
        max_turns=max_turns,
        **kwargs,
    )
