"""`vf-lite eval ENV_A ENV_B`: one grouped run, reported per task; --resume and --cache work on it."""

from __future__ import annotations

import json

import verifiers_lite as vf
from verifiers_lite.cli import main


def test_eval_of_two_environments_reports_per_task(fake_server, tmp_path, capsys):
    argv = [
        "eval",
        "arithmetic",
        "guess_number",
        "-b",
        fake_server.base_url,
        "-m",
        "fake-arith",
        "-n",
        "3",
        "-r",
        "2",
        "-s",
        str(tmp_path),
        "-q",
        "--no-plot",
        "-T",
        "0",
        "--cache",
        str(tmp_path / "c.sqlite"),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "task arithmetic" in out and "task guess_number" in out
    run_dir = next(tmp_path.glob("arithmetic_guess_number--fake-arith/*"))
    summary = json.loads((run_dir / "summary.json").read_text())
    assert set(summary["tasks"]) == {"arithmetic", "guess_number"}
    assert (
        summary["tasks"]["arithmetic"]["num_rollouts"]
        == 6
        == summary["tasks"]["guess_number"]["num_rollouts"]
    )
    # Per-task figures are those of the task's rows alone.
    rows = vf.load_results(run_dir).rows
    arith = [r["reward"] for r in rows if r["task"] == "arithmetic"]
    assert summary["tasks"]["arithmetic"]["reward_mean"] == sum(arith) / len(arith)
    assert summary["tasks"]["guess_number"]["pass_criterion"] == {
        "metric": "solved",
        "threshold": 1.0,
    }
    assert summary["cache"]["misses"] > 0
    # Resume finds the run by the group's name, rebuilds the group from metadata, reruns nothing.
    before = fake_server.stats()["requests"]
    assert (
        main(
            [
                "eval",
                "arithmetic",
                "guess_number",
                "-b",
                fake_server.base_url,
                "-s",
                str(tmp_path),
                "-q",
                "--no-plot",
                "--resume",
            ]
        )
        == 0
    )
    assert fake_server.stats()["requests"] == before
    # A rerun in a new directory with the cache calls no model at all.
    assert main(argv) == 0
    assert fake_server.stats()["requests"] == before
    assert "response cache: " in capsys.readouterr().out


def test_env_args_of_a_group_must_be_keyed_by_env_id(fake_server, tmp_path, capsys):
    code = main(
        [
            "eval",
            "arithmetic",
            "guess_number",
            "-b",
            fake_server.base_url,
            "-m",
            "fake-arith",
            "-s",
            str(tmp_path),
            "-a",
            '{"digits": 2}',
        ]
    )
    assert code == 2
    assert "keyed by env id" in capsys.readouterr().err
    assert fake_server.stats()["requests"] == 0
