import verifiers as vf
from verifiers.utils.data_utils import THINK_BOXED_SYSTEM_PROMPT


def load_environment(num_train_examples: int = 8, use_think: bool = True):
    dataset = vf.load_example_dataset("math", "train", n=num_train_examples)
    if use_think:
        parser = vf.ThinkParser(extract_fn=vf.extract_boxed_answer)
    else:
        parser = vf.MaybeThinkParser(extract_fn=vf.extract_boxed_answer)

    def correct_answer(parser, completion, answer) -> float:
        response = parser.parse_answer(completion) or ""
        return 1.0 if response == answer else 0.0

    rubric = vf.Rubric(parser=parser)
    rubric.add_reward_func(correct_answer)
    rubric.add_reward_func(parser.get_format_reward_func(), weight=0.2)
    return vf.SingleTurnEnv(
        dataset=dataset,
        system_prompt=THINK_BOXED_SYSTEM_PROMPT,
        parser=parser,
        rubric=rubric,
    )
