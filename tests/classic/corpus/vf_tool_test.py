import random

import verifiers as vf
from datasets import Dataset


async def tool_A(x: int) -> int:
    """
    Adds 1 to an integer.

    Args:
        x: The integer to add 1 to.

    Returns:
        The integer plus 1.
    """
    return x + 1


async def tool_B(x: str) -> str:
    """
    Appends "2" to a string.

    Args:
        x: The string to extend.

    Returns:
        The string with "2" appended.
    """
    return x + "2"


async def tool_C(x: float) -> float:
    """
    Adds 3.0 to a float.

    Args:
        x: The float to add 3.0 to.

    Returns:
        The float plus 3.0.
    """
    return x + 3.0


async def tool_D(x: bool) -> bool:
    """
    Negates a boolean.

    Args:
        x: The boolean to negate.

    Returns:
        The negated boolean.
    """
    return not x


tool_list = [tool_A, tool_B, tool_C, tool_D]
tool_name_list = [tool.__name__ for tool in tool_list]


def tool_call_reward_func(completion: vf.Messages, info: dict) -> float:
    tool_calls = (completion[-1].tool_calls or []) if completion[-1].role == "assistant" else []
    called = sorted([call.name for call in tool_calls])
    return 1.0 if called == sorted(info["tool_names"]) else 0.0


def load_environment(num_train_examples: int = 20, num_eval_examples: int = 10) -> vf.ToolEnv:
    def build_dataset(count, seed_offset=0):
        rng = random.Random(42 + seed_offset)
        rows = []
        for _ in range(count):
            names = rng.sample(tool_name_list, rng.randint(1, len(tool_name_list)))
            prompt = [{"role": "user", "content": f"Call the following tools with arguments of your choice: {names}"}]
            rows.append({"prompt": prompt, "info": {"tool_names": names}})
        return Dataset.from_list(rows)

    return vf.ToolEnv(
        dataset=lambda: build_dataset(num_train_examples, seed_offset=0),
        eval_dataset=lambda: build_dataset(num_eval_examples, seed_offset=1),
        rubric=vf.Rubric(funcs=[tool_call_reward_func]),
        tools=tool_list,
        max_turns=1,
    )
