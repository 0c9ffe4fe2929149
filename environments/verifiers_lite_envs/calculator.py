"""calculator: tool use over several turns; the model may call a ``calculator`` tool.

Measures whether a model delegates arithmetic it cannot do reliably (products and sums of
2-3 digit numbers) to a tool and reports the tool's result. Questions come from a seeded
generator (same seed, same questions). The tool evaluates arithmetic safely by walking the
expression's syntax tree (numbers, + - * / // % **, parentheses); it never calls eval().

Reward: ``correct`` (final answer, read from ``\\boxed{}`` or the stated number, equals the true
result). Metric (weight 0): ``used_calculator`` (at least one tool call).
"""

from __future__ import annotations

import ast
import operator
import random
from typing import Any

import verifiers_lite as vf
from verifiers_lite.core.state import State

from ._common import NumberParser, answered, exact_number_reward

SYSTEM_PROMPT = (
    "You can call the calculator tool to evaluate arithmetic expressions. Use it, then give "
    "the final result as \\boxed{result}."
)
_BINARY: dict[type[ast.operator], Any] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Any] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
MAX_ABS = 10**15  # results past this are refused: no 9**9**9 denial of service
MAX_EXPONENT = 64


def safe_eval(expression: str) -> int | float:
    """Value of an arithmetic expression, computed from its syntax tree (never eval())."""
    if len(expression) > 200:
        raise ValueError("expression too long (200 characters at most)")
    tree = ast.parse(expression.replace("^", "**").replace("×", "*"), mode="eval")

    def walk(node: ast.AST) -> int | float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](walk(node.operand))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
                raise ValueError(f"exponent {right} too large")
            value = _BINARY[type(node.op)](left, right)
            if abs(value) > MAX_ABS:
                raise ValueError("result too large")
            return value
        raise ValueError(f"unsupported syntax: {ast.dump(node)[:60]}")

    return walk(tree)


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression such as "(12 + 7) * 3".

    Args:
        expression: numbers with + - * / // % ** and parentheses.
    """
    try:
        value = safe_eval(expression)
    except ZeroDivisionError:
        return "Error: division by zero"
    except (ValueError, SyntaxError, TypeError) as exc:
        return f"Error: {exc}"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def make_rows(num_examples: int, seed: int) -> list[dict[str, Any]]:
    """Deterministic questions for ``seed``: a op b with 2-3 digit operands."""
    rng = random.Random(seed)
    rows = []
    for i in range(num_examples):
        a, b, op = rng.randint(10, 999), rng.randint(10, 999), rng.choice("+-*")
        rows.append(
            {
                "example_id": i,
                "question": f"What is {a} {op} {b}?",
                "answer": calculator(f"{a} {op} {b}"),
                "task": "calculator",
            }
        )
    return rows


def correct(completion: Any, answer: str, parser: vf.Parser) -> float:
    """1.0 when the final answer equals the true result."""
    return exact_number_reward(completion, answer, parser)


def used_calculator(state: State) -> float:
    """1.0 when the model called a tool at least once."""
    return 1.0 if any(m.get("tool_calls") for m in state.get("completion") or []) else 0.0


def load_environment(
    num_examples: int = 50,
    seed: int = 0,
    max_turns: int = 4,
    max_tokens: int = 128,
    system_prompt: str = SYSTEM_PROMPT,
) -> vf.ToolEnv:
    """Build the calculator tool environment.

    Args:
        num_examples: questions generated.
        seed: generator seed (same seed, same questions).
        max_turns: model turns allowed (tool calls included).
        max_tokens: completion budget per turn.
        system_prompt: the system message.
    """
    if num_examples < 1:
        raise ValueError(f"num_examples must be >= 1, got {num_examples}")
    parser = NumberParser()
    rubric = vf.Rubric([correct, used_calculator, answered], weights=[1.0, 0.0, 0.0], parser=parser)
    return vf.ToolEnv(
        tools=[calculator],
        dataset=lambda: make_rows(num_examples, seed),
        system_prompt=system_prompt,
        parser=parser,
        rubric=rubric,
        max_turns=max_turns,
        sampling_args={"max_tokens": max_tokens},
    )
