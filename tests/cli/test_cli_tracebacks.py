"""``vf-lite eval`` on an environment with a bug: after the table it says how many rollouts failed
where, per category and distinct traceback, and prints the first traceback in full, from the
environment module's own line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BUGGY_ENV = """
import verifiers_lite as vf


class Hints(vf.MultiTurnEnv):
    async def env_response(self, messages, state):
        return [{"role": "user", "content": state["hints"][0]}]  # the bug


def load_environment():
    rows = [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(3)]
    return Hints(dataset=rows, max_turns=3)
"""


def test_eval_prints_the_first_traceback_and_counts_them(fake_server, tmp_path: Path):
    (tmp_path / "buggy_env.py").write_text(BUGGY_ENV)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
    }
    r = subprocess.run(
        [sys.executable, "-m", "verifiers_lite.cli", "eval", "buggy_env", "-b"]
        + [fake_server.base_url, "-m", "fake-echo", "-n", "3", "-r", "2", "-q", "--no-plot"]
        + ["-s", str(tmp_path / "out")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 1  # every rollout failed
    assert "failures with a traceback: env_error 6 rollouts (1 distinct)" in r.stderr, r.stderr
    line = BUGGY_ENV.splitlines().index(next(x for x in BUGGY_ENV.splitlines() if "the bug" in x))
    where = f'File "{tmp_path / "buggy_env.py"}", line {line + 1}, in env_response'
    assert where in r.stderr and r.stderr.count("Traceback (most recent call last)") == 1
    assert "KeyError: 'hints'" in r.stderr


TOOL_ENV = '''
import verifiers_lite as vf


def calculator(expression: str) -> str:
    """Evaluate a sum.

    Args:
        expression: e.g. "3 + 4".
    """
    a, op, b = expression.split()
    if op == "+" and int(a) > 5:
        raise ValueError("sums over 5 are not done yet")  # the first bug
    if op == "*":
        return {}[expression]  # the second bug
    return str(int(a) + int(b))


def load_environment():
    questions = ["1 + 2", "7 + 1", "9 + 3", "2 * 3"]
    rows = [{"question": f"What is {q}?", "answer": str(eval(q))} for q in questions]
    return vf.ToolEnv(tools=[calculator], dataset=rows)
'''


def test_eval_counts_the_tool_calls_that_raised_and_prints_the_first(fake_server, tmp_path: Path):
    (tmp_path / "tool_env.py").write_text(TOOL_ENV)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
    }
    r = subprocess.run(
        [sys.executable, "-m", "verifiers_lite.cli", "eval", "tool_env", "-b"]
        + [fake_server.base_url, "-m", "fake-tool", "-n", "4", "-r", "2", "-q", "--no-plot"]
        + ["-s", str(tmp_path / "out")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr  # a tool that raises fails no rollout
    # by hand: the model calls the calculator once per rollout on the question's sum; 7 + 1 and
    # 9 + 3 raise at the first bug (one text: same line, same message), 2 * 3 at the second;
    # 2 rollouts each: 6 calls in 6 rollouts, 2 distinct tracebacks
    assert "tool errors: 6 calls in 6 rollouts, 2 distinct tracebacks" in r.stderr, r.stderr
    assert "failures with a traceback" not in r.stderr  # no rollout failed
    lines = TOOL_ENV.splitlines()
    first_bug = next(i for i, x in enumerate(lines) if "the first bug" in x) + 1
    where = f'File "{tmp_path / "tool_env.py"}", line {first_bug}, in calculator'
    assert where in r.stderr and r.stderr.count("Traceback (most recent call last)") == 1
    assert "ValueError: sums over 5 are not done yet" in r.stderr
    assert "KeyError" not in r.stderr  # only the first is printed in full
