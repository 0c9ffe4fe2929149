"""Reward code defined in notebook cells, in a real Jupyter kernel: redefining the function with
other code refuses the resume naming it (no request, nothing on disk changed); re-running the
same cell resumes with no request; ``vf.rescore`` then applies the new code without requests."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow

SETUP = """
import verifiers_lite as vf
client = vf.ChatClient({url!r})
rows = [{{"question": f"What is {{i}} + {{i % 7}}?", "answer": str(i + i % 7)}} for i in range(4)]
run_dir = {run!r}
def run():
    env = vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric([correct]))
    return env.evaluate_sync(client, 'fake-arith', rollouts_per_example=2, results_path=run_dir, progress=False)
"""
CELL_V1 = """
def correct(completion, answer):
    return float(vf.extract_boxed_answer(completion[-1]["content"] or "") == answer)
"""
CELL_V2 = """
def correct(completion, answer):
    # fixed: half credit
    return 0.5 * float(vf.extract_boxed_answer(completion[-1]["content"] or "") == answer)
"""


def test_redefined_reward_cell_is_refused_and_rescored(kernel, fake_server, tmp_path):
    run = tmp_path / "run"
    kernel.run(SETUP.format(url=fake_server.base_url, run=str(run)))
    kernel.run(CELL_V1 + "first = run()\nprint(len(first))")
    requests = fake_server.stats()["requests"]
    assert requests == 8
    kernel.run(CELL_V1 + "again = run()\nprint(len(again))")  # the same cell run twice
    assert fake_server.stats()["requests"] == requests
    files = {p.name: p.read_bytes() for p in run.iterdir()}
    out = kernel.collect(kernel.send(CELL_V2 + "run()"))
    assert out["error"] == "ResumeMismatchError"
    assert "reward code changed since the saved run: correct" in "\n".join(out["traceback"])
    assert fake_server.stats()["requests"] == requests
    assert {p.name: p.read_bytes() for p in run.iterdir()} == files
    out = kernel.run(
        "import json\nfixed = vf.rescore(run_dir, vf.Rubric([correct]))\n"
        "print(json.dumps([[a['reward'], b['reward']] for a, b in zip(first.rows, fixed.rows)]))"
    )
    pairs = json.loads(out["stdout"])
    assert len(pairs) == 8 and {old for old, _ in pairs} == {0.0, 1.0}
    assert all(new == 0.5 * old for old, new in pairs)
    assert fake_server.stats()["requests"] == requests
