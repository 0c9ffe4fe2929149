import os
import random

import verifiers as vf
from datasets import load_dataset
from openai import AsyncOpenAI

_rand = random.Random(777)


def make_cut(text: str) -> dict[str, str]:
    """Cut a paragraph somewhere near its middle: a prefix to continue, the true rest."""
    n_spaces = text.count(" ")
    split_space = int(_rand.normalvariate(0.5, 0.15) * n_spaces)
    split_space = min(n_spaces - 25, max(25, split_space))
    idx = -1
    for _ in range(split_space):
        idx = text.find(" ", idx + 1)
    return {"prompt": text[:idx], "answer": text[idx:]}


JUDGE_PROMPT = """Compare a model's continuation of a prefix with the true continuation.

<prefix>
{question}
</prefix>

<true_continuation>
{answer}
</true_continuation>

<model_continuation>
{response}
</model_continuation>

Think in a <scratchpad> for a few lines, then give a letter grade A-F in <grade> ... </grade> tags."""


def load_environment(
    dataset_name: str = "agentlans/wikipedia-paragraphs",
    judge_model: str = "gpt-4.1-mini",
    judge_base_url: str = "https://api.openai.com/v1",
    judge_api_key_var: str = "OPENAI_API_KEY",
) -> vf.Environment:
    def build_dataset():
        dataset = load_dataset(dataset_name, split="train")
        dataset = dataset.filter(lambda x: x["text"].count(" ") > 100)
        dataset = dataset.map(lambda x: make_cut(x["text"]))
        return dataset.shuffle(seed=777)

    judge_client = AsyncOpenAI(base_url=judge_base_url, api_key=os.getenv(judge_api_key_var, "EMPTY"))
    rubric = vf.JudgeRubric(judge_client=judge_client, judge_model=judge_model, judge_prompt=JUDGE_PROMPT)
    grade_parser = vf.XMLParser(fields=["grade"], answer_field="grade")

    async def grade_reward(judge, prompt, completion, answer, state) -> float:
        grade = (grade_parser.parse_answer(await judge(prompt, completion, answer, state)) or "F").strip().upper()
        return {"A": 1.0, "B": 0.75, "C": 0.5, "D": 0.25}.get(grade, 0.0)

    def one_line(completion, **kwargs) -> float:
        return 1.0 if "\n" not in completion else 0.0

    rubric.add_reward_func(grade_reward, weight=1.0)
    rubric.add_reward_func(one_line, weight=0.1)
    return vf.SingleTurnEnv(
        message_type="completion",
        dataset=build_dataset,
        parser=vf.Parser(),
        rubric=rubric,
        sampling_args={"stop": ["\n"]},
    )
