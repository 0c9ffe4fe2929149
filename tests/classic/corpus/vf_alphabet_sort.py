import difflib
import json
import random

import verifiers as vf
from datasets import Dataset, load_dataset


def _last_name(name: str) -> str:
    return name.split(" ")[-1]


def build_dataset_fn(dataset_name: str, seed: int, max_turns: int):
    def build() -> Dataset:
        random.seed(seed)
        rows = []
        for entry in load_dataset(dataset_name, split="train"):
            names = entry["names"]
            num_turns = random.randint(1, max_turns)
            per_turn = [random.randint(1, 3) for _ in range(num_turns)]
            if sum(per_turn) > len(names):
                continue
            by_first = random.choice([True, False])
            key = (lambda n: n) if by_first else _last_name
            turns, truths, cumulative, start = [], [], [], 0
            for count in per_turn:
                batch = names[start : start + count]
                start += count
                cumulative = sorted(cumulative + batch, key=key)
                turns.append(batch)
                truths.append(list(cumulative))
            kind = "FIRST" if by_first else "LAST"
            prompts = [
                f"Sort these names in alphabetical order by {kind} name: {', '.join(t)}\n\n"
                f"Use exactly this format:\n<sorted>\nName1\nName2\n</sorted>"
                if i == 0
                else f"Now sort ALL names so far alphabetically by {kind} name, adding: {', '.join(t)}\n"
                f"Use the same <sorted> format."
                for i, t in enumerate(turns)
            ]
            rows.append(
                {
                    "prompt": [{"role": "user", "content": prompts[0]}],
                    "answer": json.dumps(truths),
                    "info": {"follow_ups": prompts[1:], "num_turns": num_turns, "ground_truths": truths},
                }
            )
        return Dataset.from_list(rows)

    return build


def load_environment(max_turns: int = 3, similarity_power: int = 4, seed: int = 1337, **kwargs) -> vf.Environment:
    parser = vf.XMLParser(["sorted"], answer_field="sorted")

    class SortingEnv(vf.MultiTurnEnv):
        @vf.stop
        async def all_turns_done(self, state: vf.State) -> bool:
            return len(state["trajectory"]) >= state["info"]["num_turns"]

        async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs) -> vf.Messages:
            assistant_count = len([m for m in messages if m["role"] == "assistant"])
            return [vf.UserMessage(content=state["info"]["follow_ups"][assistant_count - 1])]

    def turn_similarity(completion, state, **kwargs) -> float:
        truths = state["info"]["ground_truths"]
        replies = [m["content"] for m in completion if m["role"] == "assistant"]
        total = 0.0
        for reply, truth in zip(replies, truths):
            parsed = parser.parse(reply)
            got = [line.strip() for line in (parsed.sorted or "").strip().split("\n") if line.strip()]
            ratio = difflib.SequenceMatcher(None, "\n".join(got).lower(), "\n".join(truth).lower()).ratio()
            total += ratio**similarity_power
        return total / len(truths)

    rubric = vf.Rubric(funcs=[turn_similarity], weights=[1.0])
    return SortingEnv(
        dataset=build_dataset_fn("kalomaze/alphabetic-arxiv-authors-it1", seed, max_turns),
        parser=parser,
        rubric=rubric,
        max_turns=max_turns,
    )
