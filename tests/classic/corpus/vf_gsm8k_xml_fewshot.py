import verifiers as vf
from datasets import load_dataset

FEW_SHOT = [
    {"role": "user", "content": "Sam has 3 pens and buys 4 more. How many pens? (That is 3 + 4.)"},
    {
        "role": "assistant",
        "content": "<think>\n3 + 4 = 7\n</think>\n<answer>\n7\n</answer>",
    },
]


def load_environment(num_examples: int = -1, format_weight: float = 0.2):
    dataset = load_dataset("openai/gsm8k", "main", split="test")
    dataset = dataset.map(
        lambda x: {"question": x["question"], "answer": vf.extract_hash_answer(x["answer"])}
    )
    if num_examples > 0:
        dataset = dataset.select(range(num_examples))

    parser = vf.XMLParser(fields=["think", "answer"], answer_field="answer")
    system_prompt = f"Solve the problem. Respond in the following format:\n{parser.get_format_str()}"

    def exact_answer(completion, answer, **kwargs) -> float:
        response = parser.parse_answer(completion) or ""
        return 1.0 if response.strip() == answer.strip() else 0.0

    def answer_contains_number(parser, completion, **kwargs) -> float:
        response = parser.parse_answer(completion) or ""
        return 1.0 if any(ch.isdigit() for ch in response) else 0.0

    rubric = vf.Rubric(
        funcs=[exact_answer, parser.get_format_reward_func(), answer_contains_number],
        weights=[1.0, format_weight, 0.0],
        parser=parser,
    )
    return vf.SingleTurnEnv(
        eval_dataset=dataset,
        system_prompt=system_prompt,
        few_shot=FEW_SHOT,
        parser=parser,
        rubric=rubric,
    )
