"""The ways out of a resume refused because a reward helper was fixed, for an environment
loadable by id (a module on disk): the refusal names the helper as the change and the functions
using it, and gives the Python call and the ``vf-lite rescore`` line; each is run as written (the
line by the installed ``vf-lite``, the call in a fresh Python process) and gives the rewards the
test computes by hand. An environment built by hand gets the Python call only."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import verifiers_lite as vf

ENV_MODULE = """
import verifiers_lite as vf


def answer_of(completion):
    return {answer_of}


def solved(completion, answer):
    return float(answer_of(completion) == answer)


def efficiency(completion, answer, state):
    return 0.5 / state["turns"] if answer_of(completion) == answer else 0.0


def load_environment():
    rows = [{{"question": f"What is {{i}} + {{5 - i}}?", "answer": "5"}} for i in range(3)]
    return vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric([solved, efficiency]))
"""
V1 = 'completion[-1]["content"].strip()'
V2 = 'completion[-1]["content"].split()[-1]  # fixed: the last word is the answer'
SCRIPT = """
import json, sys
import verifiers_lite as vf
env = vf.load_environment("hint_env")
try:
    out = env.evaluate_sync(vf.ScriptedClient("I think 5"), "scripted", rollouts_per_example=2,
                            results_path=sys.argv[1], progress=False)
    print(json.dumps({"rewards": out.rewards}))
except vf.ResumeMismatchError as exc:
    print(json.dumps({"refused": str(exc)}))
"""


def _python(code: str, *args: str, cwd: Path) -> dict:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(cwd), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _vf_lite(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("vf-lite")  # the installed console script
    argv = shlex.split(command)
    assert argv[0] == "vf-lite" and exe.exists(), (argv, exe)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(cwd), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [str(exe), *argv[1:]], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def refused(tmp_path):
    """A run of the module's environment, its helper fixed after it, the refused resume's message."""
    module = tmp_path / "hint_env.py"
    module.write_text(ENV_MODULE.format(answer_of=V1))
    run = tmp_path / "run"
    assert _python(SCRIPT, str(run), cwd=tmp_path) == {
        "rewards": [0.0] * 6
    }  # "I think 5" is not "5"
    module.write_text(ENV_MODULE.format(answer_of=V2))
    message = _python(SCRIPT, str(run), cwd=tmp_path)["refused"]
    assert (
        "reward code changed since the saved run: answer_of changed; used by solved, efficiency"
        in message
    )
    return run, message


def _rewards(run: Path) -> list[float]:
    return [json.loads(line)["reward"] for line in (run / "results.jsonl").read_text().splitlines()]


def test_the_advised_vf_lite_line_rescores_with_the_fixed_helper(refused, tmp_path):
    run, message = refused
    (line,) = re.findall(r"`(vf-lite rescore [^`]*)`", message)
    done = _vf_lite(line, tmp_path)
    assert done.returncode == 0, done.stderr
    assert _rewards(Path(f"{run}-rescored")) == [1.0 + 0.5 / 1] * 6  # right in one turn
    resumed = _python(
        SCRIPT, f"{run}-rescored", cwd=tmp_path
    )  # the re-scored run resumes under the fix
    assert resumed == {"rewards": [1.5] * 6}


def test_the_advised_python_call_rescores_with_the_fixed_helper(refused, tmp_path):
    run, message = refused
    (call,) = re.findall(r"vf\.rescore\([^)]*\)", message)
    out = _python(
        f"import json\nimport verifiers_lite as vf\nenv = vf.load_environment('hint_env')\n"
        f"fixed = {call}\nprint(json.dumps({{'rewards': fixed.rewards}}))",
        cwd=tmp_path,
    )
    assert out == {"rewards": [1.5] * 6}


def test_an_environment_with_another_rubric_than_its_id_loads_gets_the_python_call_only(tmp_path):
    env = vf.load_environment("arithmetic", num_examples=2)
    env.evaluate_sync(
        vf.ScriptedClient("7"), "scripted", results_path=str(tmp_path / "run"), progress=False
    )
    env.rubric = vf.Rubric(
        [lambda completion, answer: 0.5]
    )  # changed in memory: `vf-lite rescore` would not see it
    with pytest.raises(vf.ResumeMismatchError) as info:
        env.evaluate_sync(
            vf.ScriptedClient("7"), "scripted", results_path=str(tmp_path / "run"), progress=False
        )
    msg = str(info.value)
    assert f"vf.rescore({str(tmp_path / 'run')!r}, env)" in msg and "vf-lite rescore" not in msg
    assert "'arithmetic' has another rubric" in msg
