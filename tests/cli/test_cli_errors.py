"""``vf-lite eval`` with failing rollouts: exit codes past the error-rate threshold, the last
line says how to rerun them, and ``--resume`` reruns exactly the failed ones."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import run_dir, vf_lite


def _rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]


def test_empty_model_name_is_a_usage_error(fake_server, tmp_path):
    r = vf_lite("eval", "arithmetic", "-b", fake_server.base_url, "-m", "", cwd=tmp_path)
    assert r.returncode == 2 and "--model must not be empty" in r.stderr
    assert fake_server.stats()["requests"] == 0


def test_errors_past_the_threshold_exit_1_and_resume_reruns_them(fake_server, tmp_path):
    # 5 of 16 requests fail with a non-retryable 400: 31% > the default 10%
    fake_server.configure(faults=[{"status": 400}] * 5)
    out = tmp_path / "out"
    r = vf_lite(
        "eval",
        "arithmetic",
        "-b",
        fake_server.base_url,
        "-m",
        "fake-arith",
        "-n",
        "8",
        "-r",
        "2",
        "-c",
        "1",
        "-s",
        str(out),
        "-q",
        "--no-plot",
        cwd=tmp_path,
    )
    assert r.returncode == 1, r.stderr
    run = run_dir(out)
    last = r.stderr.strip().splitlines()[-1]
    assert "5 of 16 (31%) rollouts failed" in last and f"--resume {run}" in last, last
    assert json.loads((run / "metadata.json").read_text())["status"] == "completed_with_errors"
    failed_keys = {(x["example_id"], x["rollout_index"]) for x in _rows(run) if x.get("error")}
    assert len(failed_keys) == 5

    fake_server.reset()
    r = vf_lite(
        "eval",
        "arithmetic",
        "--resume",
        str(run),
        "-b",
        fake_server.base_url,
        "-q",
        "--no-plot",
        "-s",
        str(out),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    rows = _rows(run)
    assert len(rows) == 16 and not any(x.get("error") for x in rows)
    rerun_groups = {eid for eid, _ in failed_keys}
    assert fake_server.stats()["requests"] == 2 * len(rerun_groups)  # whole groups, nothing else
    assert {(x["example_id"], x["attempts"]) for x in rows if x["attempts"] == 2} == {
        (e, 2) for e in rerun_groups
    }


def test_errors_below_the_threshold_warn_and_exit_0(fake_server, tmp_path):
    fake_server.configure(faults=[{"status": 400}])
    r = vf_lite(
        "eval",
        "arithmetic",
        "-b",
        fake_server.base_url,
        "-m",
        "fake-arith",
        "-n",
        "8",
        "-r",
        "2",
        "-c",
        "1",
        "-s",
        str(tmp_path / "out"),
        "-q",
        "--no-plot",
        "--max-error-rate",
        "0.2",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "warning: 1 of 16 rollouts failed" in r.stderr.strip().splitlines()[-1]
