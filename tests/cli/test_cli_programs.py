"""``vf-lite eval`` on a program environment: the bundled agent against the fake server, saved,
resumed without rerunning what is done, and re-scored from the saved calls."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import run_dir, vf_lite
from verifiers_lite.testing.fake_server import FakeServerProcess


def _eval(fake_server: FakeServerProcess, tmp_path: Path, n: int, *args: str) -> None:
    r = vf_lite(
        "eval", "calculator_agent", "-b", fake_server.base_url, "-m", "fake-tool",
        "-n", str(n), "-r", "1", "-q", "--no-plot", "-s", str(tmp_path / "runs"), *args,
        cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr


def test_eval_resume_and_rescore_a_program_environment(
    fake_server: FakeServerProcess, tmp_path: Path
) -> None:
    _eval(fake_server, tmp_path, 2)
    run = run_dir(tmp_path / "runs")
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    # fake-tool calls the calculator, then answers its result: each program made two calls.
    assert [r["reward"] for r in rows] == [1.0, 1.0]
    assert [len(r["env_state"]["program_calls"]) for r in rows] == [2, 2]
    assert fake_server.stats()["requests"] == 4

    _eval(fake_server, tmp_path, 3, "--resume", str(run))
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert sorted(r["example_id"] for r in rows) == [0, 1, 2]
    assert fake_server.stats()["requests"] == 6  # only the new example's program ran

    r = vf_lite("rescore", str(run), cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert fake_server.stats()["requests"] == 6  # no program ran again
