"""``vf-lite rescore RUN_DIR`` end to end: an environment module whose reward is fixed after the
run; the resume is refused naming the function, the re-score sends no request and gives the new
rewards, and the re-scored directory resumes under the new code with no request."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from verifiers_lite.results.store import read_rows

ENV_MODULE = """
import verifiers_lite as vf


def stated_answer(completion, answer):
    text = completion[-1]["content"] or ""
    return WEIGHT if vf.extract_boxed_answer(text) == answer else 0.0


WEIGHT = {weight}


def load_environment(num_examples=4):
    rows = [{{"question": f"What is {{i}} + {{i % 3}}?", "answer": str(i + i % 3)}} for i in range(num_examples)]
    return vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric([stated_answer]))
"""


def _vf_lite(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": os.pathsep.join([str(cwd), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "verifiers_lite.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_rescore_cli_uses_the_current_rubric_and_sends_no_request(fake_server, tmp_path):
    module = tmp_path / "fixable_env.py"
    module.write_text(ENV_MODULE.format(weight=1.0))
    root = tmp_path / "out"
    r = _vf_lite(
        "eval",
        "fixable_env",
        "-b",
        fake_server.base_url,
        "-m",
        "fake-arith",
        "-n",
        "4",
        "-r",
        "3",
        "-q",
        "--no-plot",
        "-s",
        str(root),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    (run,) = [p for p in root.glob("*/*") if (p / "metadata.json").exists()]
    requests = fake_server.stats()["requests"]
    assert requests == 12

    module.write_text(ENV_MODULE.format(weight=0.5))  # the reward is "fixed" after the run
    r = _vf_lite(
        "eval",
        "fixable_env",
        "-b",
        fake_server.base_url,
        "--resume",
        str(run),
        "-q",
        "--no-plot",
        "-s",
        str(root),
        cwd=tmp_path,
    )
    assert (
        r.returncode == 2 and "reward code changed since the saved run: stated_answer" in r.stderr
    ), r.stderr
    assert "vf-lite rescore" in r.stderr

    target = tmp_path / "fixed"
    r = _vf_lite("rescore", str(run), "-o", str(target), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert str(target) in r.stdout and "reward before" in r.stdout
    # the saved rollouts' timings are the original run's, not this command's
    assert "time / rollout" not in r.stdout, r.stdout
    assert fake_server.stats()["requests"] == requests
    old, new = read_rows(run / "results.jsonl"), read_rows(target / "results.jsonl")
    for o, n in zip(old, new, strict=True):
        m = re.search(r"\\boxed\{(-?\d+)\}", o["completion"][-1]["content"] or "")
        right = m is not None and m.group(1) == o["answer"]
        assert (o["reward"], n["reward"]) == ((1.0, 0.5) if right else (0.0, 0.0))
    meta = json.loads((target / "metadata.json").read_text())
    assert meta["rescored_from"]["path"] == str(run) and meta["env_id"] == "fixable_env"

    r = _vf_lite(
        "eval",
        "fixable_env",
        "-b",
        fake_server.base_url,
        "--resume",
        str(target),
        "-q",
        "--no-plot",
        "-s",
        str(root),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert fake_server.stats()["requests"] == requests  # resumed whole under the new code

    r = _vf_lite("rescore", str(run), "-o", str(target), cwd=tmp_path)
    assert r.returncode == 2 and "already holds a run" in r.stderr and "--overwrite" in r.stderr
    r = _vf_lite("rescore", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert r.returncode == 2 and "holds no run" in r.stderr
