"""The notebook's results count the tool calls whose tool raised (the model was told and went
on, so no rollout failed): how many calls in how many rollouts, each distinct traceback with
its calls, the first open; checked against a count by hand of a real run."""

from __future__ import annotations

import html
import re

import verifiers_lite as vf


def calculator(expression: str) -> str:
    """Evaluate a sum.

    Args:
        expression: e.g. "3 + 4".
    """
    a, op, b = expression.split()
    if op == "+" and int(a) > 5:
        raise ValueError("sums over 5 are not done yet")
    if op == "*":
        return {}[expression]
    return str(int(a) + int(b))


def test_results_count_the_tool_calls_that_raised(fake_server):
    questions = ["1 + 2", "7 + 1", "9 + 3", "2 * 3", "4 + 4"]
    rows = [{"question": f"What is {q}?", "answer": str(eval(q))} for q in questions]
    env = vf.ToolEnv(tools=[calculator], dataset=rows)
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-tool", rollouts_per_example=3, progress=False
    )
    shown = html.unescape(out._repr_html_())
    # by hand: one calculator call per rollout on the question's sum; 7 + 1 and 9 + 3 raise the
    # ValueError (one traceback: same line and message), 2 * 3 the KeyError; 3 rollouts each
    assert "tool errors: 9 calls in 9 rollouts, 2 distinct tracebacks" in shown
    assert "no errors" in shown  # the rollouts themselves went on
    tracebacks = re.findall(
        r"<details( open)? class=\"vf-traceback\"><summary[^>]*>([^<]*)<", shown
    )
    assert tracebacks == [
        (" open", "traceback · tool · 6 calls"),
        ("", "traceback · tool · 3 calls"),
    ]
    assert "ValueError: sums over 5 are not done yet" in shown and "KeyError: '2 * 3'" in shown
    assert ", in calculator\n    raise ValueError(" in shown


def test_a_run_whose_tools_all_ran_says_nothing_of_tool_errors(fake_server):
    env = vf.ToolEnv(tools=[calculator], dataset=[{"question": "What is 1 + 2?", "answer": "3"}])
    out = env.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-tool", progress=False)
    assert "Tool errors" not in out._repr_html_()
