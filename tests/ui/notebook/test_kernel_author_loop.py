"""The author's loop in a real Jupyter kernel: an environment and a reward function defined in
cells, a bug in ``env_response``; the results' error view shows the traceback from the cell's
own line, the rows their score's explanation, and asking for more examples than the dataset
has says so in the cell."""

from __future__ import annotations

import html

import pytest

pytestmark = pytest.mark.slow

CELL = """
import verifiers_lite as vf

class HintEnv(vf.MultiTurnEnv):
    async def env_response(self, messages, state):
        if state["example_id"] == 1:
            return [{"role": "user", "content": state["hints"][0]}]  # the bug
        return [{"role": "user", "content": "Say it once more."}]

def said_answer(completion, answer):
    return vf.Score(float(answer in completion[-1]["content"]), f"looked for {answer!r}")

rows = [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(2)]
env = HintEnv(dataset=rows, rubric=vf.Rubric([said_answer]), max_turns=2)
out = env.evaluate_sync(vf.ChatClient(URL), "fake-echo", num_examples=5, progress=False)
out
"""


def test_error_view_shows_the_cells_traceback_and_rows_their_explanation(kernel, fake_server):
    result = kernel.run(CELL.replace("URL", repr(fake_server.base_url)))
    shown = html.unescape("".join(result["html"]))
    # the traceback from the cell's own line, with its source, under the errors by category
    assert "traceback · env_error · 1 rollout" in shown
    assert 'in env_response\n    return [{"role": "user", "content": state["hints"][0]}]' in shown
    assert "KeyError: 'hints'" in shown
    # the scored rollout's explanation beside its reward
    assert "said_answer: looked for '1'" in shown
    # 5 examples asked of a dataset of 2: said in the cell, naming both numbers
    assert "num_examples=5" in result["stderr"] and "2 rows" in result["stderr"]


TOOL_CELL = """
import verifiers_lite as vf

def calculator(expression: str) -> str:
    '''Evaluate a sum.

    Args:
        expression: e.g. "3 + 4".
    '''
    a, op, b = expression.split()
    if int(a) > 5:
        raise ValueError("sums over 5 are not done yet")  # the bug
    return str(int(a) + int(b))

rows = [{"question": f"What is {q}?", "answer": "0"} for q in ["1 + 2", "7 + 1", "8 + 3"]]
out = vf.ToolEnv(tools=[calculator], dataset=rows).evaluate_sync(
    vf.ChatClient(URL), "fake-tool", rollouts_per_example=2, progress=False
)
out
"""


def test_error_view_counts_the_tool_calls_that_raised(kernel, fake_server):
    result = kernel.run(TOOL_CELL.replace("URL", repr(fake_server.base_url)))
    shown = html.unescape("".join(result["html"]))
    # by hand: one call per rollout; 7 + 1 and 8 + 3 raise at the cell's line, 2 rollouts each
    assert "tool errors: 4 calls in 4 rollouts, 1 distinct traceback" in shown
    assert "traceback · tool · 4 calls" in shown
    assert 'in calculator\n    raise ValueError("sums over 5 are not done yet")  # the bug' in shown
