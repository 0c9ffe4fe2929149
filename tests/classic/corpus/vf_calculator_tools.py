import verifiers as vf
from verifiers.utils.data_utils import extract_boxed_answer, load_example_dataset


def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression.

    Args:
        expression: An arithmetic expression such as "12 * 7".

    Returns:
        The value, or an error message.
    """
    allowed = set("0123456789+-*/(). ")
    if not set(expression) <= allowed:
        return "Error: only numbers and + - * / ( ) are allowed"
    try:
        return str(eval(expression))
    except Exception as e:
        return f"Error: {e}"


async def lookup_unit(name: str) -> str:
    """Look up the unit a quantity is counted in.

    Args:
        name: The quantity, e.g. "apples".

    Returns:
        The unit.
    """
    return {"apples": "pieces", "marbles": "pieces", "coins": "coins"}.get(name, "units")


class ReplyLengthRubric(vf.Rubric):
    def __init__(self):
        super().__init__()
        self.add_metric(self.assistant_chars)

    async def assistant_chars(self, completion) -> float:
        return float(sum(len(m.content or "") for m in completion if m.role == "assistant"))


def load_environment(num_examples: int = 8, max_turns: int = 3):
    dataset = load_example_dataset("gsm8k", split="train").select(range(num_examples))
    parser = vf.Parser(extract_fn=extract_boxed_answer)

    def correct_answer(completion, answer, parser) -> float:
        return 1.0 if (parser.parse_answer(completion) or "").strip() == answer else 0.0

    rubric = vf.Rubric(funcs=[correct_answer], parser=parser)
    env = vf.ToolEnv(
        dataset=dataset,
        system_prompt="Use the tools for arithmetic, then give the final answer inside \\boxed{}.",
        tools=[calculate, lookup_unit],
        parser=parser,
        rubric=rubric,
        max_turns=max_turns,
    )
    env.add_rubric(ReplyLengthRubric())
    return env
