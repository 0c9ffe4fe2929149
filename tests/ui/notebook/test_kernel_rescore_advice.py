"""The way out of a refused resume works from a notebook, in a real Jupyter kernel: an
environment class and its reward helper defined in cells; fixing the helper refuses the resume
naming the helper as the change and the functions that use it, and advises the Python call,
never ``vf-lite rescore`` (which cannot load a notebook's environment: run for real, it says so
and gives the same call). The advised call, run as written in the kernel, gives the rewards the
test computes by hand."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

SETUP = """
import json
import verifiers_lite as vf
run_dir = {run!r}

class HintSum(vf.MultiTurnEnv):
    async def is_completed(self, messages, state):
        return messages[-1]["content"].split()[-1] == state["answer"]

    async def env_response(self, messages, state):
        return [{{"role": "user", "content": "Not quite: try again."}}]

def solved(completion, answer):
    return float(answer_of(completion) == answer)

def efficiency(completion, answer, state):
    return 0.5 / state["turns"] if answer_of(completion) == answer else 0.0

def run():
    env = HintSum(dataset=[{{"question": f"What is {{i}} + {{5 - i}}?", "answer": "5"}} for i in range(3)],
                  max_turns=3, rubric=vf.Rubric([solved, efficiency]))
    out = env.evaluate_sync(vf.ScriptedClient(["I think 4", "I think 5"]), "scripted", rollouts_per_example=2,
                            results_path=run_dir, progress=False)
    return env, out
"""
HELPER_V1 = """
def answer_of(completion):
    return completion[-1]["content"].strip()
"""
HELPER_V2 = """
def answer_of(completion):
    return completion[-1]["content"].split()[-1]  # fixed: the last word is the answer
"""
REFUSED = """
try:
    run()
except vf.ResumeMismatchError as exc:
    print(json.dumps(str(exc)))
"""


def test_a_fixed_helper_in_a_notebook_is_named_and_the_advised_python_call_works(kernel, tmp_path):
    run = tmp_path / "run"
    kernel.run(SETUP.format(run=str(run)))
    first = json.loads(
        kernel.run(HELPER_V1 + "env, first = run()\nprint(json.dumps(first.rewards))")["stdout"]
    )
    assert first == [0.0] * 6  # "I think 5" is not "5" under the first helper

    message = json.loads(kernel.run(HELPER_V2 + REFUSED)["stdout"])
    assert (
        "reward code changed since the saved run: answer_of changed; used by solved, efficiency"
        in message
    )
    assert "vf-lite rescore" not in message and "defined in __main__" in message
    (call,) = re.findall(r"vf\.rescore\([^)]*\)", message)

    cli = subprocess.run(
        [sys.executable, "-m", "verifiers_lite.cli", "rescore", str(run)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=dict(os.environ),
    )
    assert cli.returncode == 2 and call in cli.stderr and "HintSum" in cli.stderr, cli.stderr
    assert "unknown environment" not in cli.stderr

    # `env` is the notebook's environment (from the first run); its reward functions now call the fixed helper.
    out = kernel.run(
        f"fixed = {call}\nprint(json.dumps([[r['turns'], r['reward']] for r in fixed.rows]))"
    )
    rows = json.loads(out["stdout"])
    assert len(rows) == 6 and all(turns == 2 for turns, _ in rows)
    assert [reward for _, reward in rows] == [
        1.0 + 0.5 / 2
    ] * 6  # right after the hint, in two turns
    again = kernel.run(
        f"run_dir = {str(run) + '-rescored'!r}\n_, again = run()\n"
        "print(json.dumps([again.rewards, again.metadata['sessions'][-1]['rollouts']]))"
    )
    assert json.loads(again["stdout"]) == [
        [1.25] * 6,
        0,
    ]  # the re-scored run resumes under the fixed helper
