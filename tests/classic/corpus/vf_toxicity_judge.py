import os
import re

import verifiers as vf
from datasets import load_dataset
from openai import AsyncOpenAI

SYSTEM_PROMPT = """You are a content moderation assistant. Classify the text as toxic or non-toxic
and explain why. Respond in the following format:
<classification>toxic/non-toxic</classification>
<explanation>Your explanation here</explanation>"""

JUDGE_PROMPT = """Evaluate this toxicity classification.

Text to analyze: {question}

Expected classification: {answer}

Model's response: {response}

Provide a score from 0 to 10. Respond with ONLY a single number from 0 to 10."""


def load_environment(
    judge_model: str = "gpt-4.1-mini",
    judge_base_url: str = "https://api.openai.com/v1",
    judge_api_key_var: str = "OPENAI_API_KEY",
    max_examples: int = -1,
) -> vf.Environment:
    def build_dataset():
        dataset = load_dataset("google/civil_comments", split="train[:80%]")
        if max_examples > 0:
            dataset = dataset.select(range(max_examples))

        def transform(example):
            toxic = example["toxicity"] >= 0.5
            return {
                "question": f"Analyze the following text for toxicity:\n\n{example['text']}",
                "answer": "toxic" if toxic else "non-toxic",
                "info": {"insult": example["insult"] >= 0.5},
            }

        return dataset.map(transform, remove_columns=dataset.column_names)

    parser = vf.XMLParser(["classification", "explanation"], answer_field="classification")
    judge_client = AsyncOpenAI(api_key=os.getenv(judge_api_key_var, "EMPTY"), base_url=judge_base_url)
    judge_rubric = vf.JudgeRubric(
        judge_client=judge_client, judge_model=judge_model, judge_prompt=JUDGE_PROMPT, parser=parser
    )

    async def judge_score(judge, prompt, completion, answer, state) -> float:
        numbers = re.findall(r"\b([0-9]|10)\b", await judge(prompt, completion, answer, state))
        return float(numbers[0]) / 10.0 if numbers else 0.0

    judge_rubric.add_reward_func(judge_score, weight=1.0)

    def classification_correct(completion, answer, **kwargs) -> float:
        return 1.0 if (parser.parse_answer(completion) or "").strip() == answer else 0.0

    label_rubric = vf.Rubric(
        funcs=[classification_correct, parser.get_format_reward_func()], weights=[0.5, 0.1], parser=parser
    )
    return vf.SingleTurnEnv(
        dataset=build_dataset,
        system_prompt=SYSTEM_PROMPT,
        parser=parser,
        rubric=vf.RubricGroup([judge_rubric, label_rubric]),
    )
