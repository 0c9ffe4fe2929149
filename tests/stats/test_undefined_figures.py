"""No number without meaning: where an interval, a p-value, a detectable difference or a sample
size cannot be computed (no variance, one example), every display says ``undefined`` and why,
instead of printing 0.000 or "2 examples needed". Runs are real ``evaluate`` runs driven by a
scripted model; the CLI runs in a subprocess; the notebook widget's frame is rendered as shown."""

from __future__ import annotations

import html
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

import verifiers_lite as vf
from verifiers_lite.cli.report import format_table, run_summary

QUESTIONS = [{"question": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(4)]


def never_right(completion) -> float:
    return 0.0


def _run(tmp_path: Path, name: str, rows: list[dict], system: str | None = None) -> Path:
    env = vf.SingleTurnEnv(
        dataset=rows, rubric=vf.Rubric([never_right]), system_prompt=system, env_id="zeros"
    )
    env.evaluate_sync(
        vf.ScriptedClient("no idea"),
        "scripted",
        rollouts_per_example=3,
        results_path=str(tmp_path / name),
        progress=False,
    )
    return tmp_path / name


@pytest.fixture
def zero_runs(tmp_path):
    return (
        _run(tmp_path, "a", QUESTIONS),
        _run(tmp_path, "b", QUESTIONS, system="Answer with a number."),
        _run(tmp_path, "one", QUESTIONS[:1]),
    )


def test_two_all_zero_runs_compare_as_undefined(zero_runs):
    a, b, _ = zero_runs
    c = vf.compare_runs(a, b)
    assert c.shared == 4 and c.diff == 0.0
    assert c.undefined.startswith("no variance in either run")
    assert all(math.isnan(x) for x in (*c.ci, c.p_value, c.mde))
    text = c.describe()
    lines = {line[:22].strip(): line[22:] for line in text.splitlines()[1:]}
    for label in ("p-value", "detectable", "examples needed"):
        assert lines[label].startswith("undefined: no variance in either run"), (label, text)
    assert "0.000 at 80% power" not in text and ": 2" not in lines["examples needed"]
    assert "undefined: no variance in either run" in repr(c)
    with pytest.raises(ValueError, match="undefined: no variance in either run"):
        c.examples_needed(0.05)
    with pytest.raises(ValueError, match="undefined: no variance in the run"):
        vf.examples_needed(a, 0.05)
    d = c.to_dict()
    assert (
        d["undefined"].startswith("no variance in either run")
        and d["mde"] is None
        and d["p_value"] is None
    )
    assert d["runs"][0]["reward_ci_undefined"] == "no variance, every example's mean is 0.000"


def test_vf_lite_compare_prints_undefined_with_the_reason(zero_runs):
    a, b, _ = zero_runs
    proc = subprocess.run(
        [sys.executable, "-m", "verifiers_lite.cli", "compare", str(a), str(b)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "detectable            undefined: no variance in either run" in out, out
    assert "examples needed       undefined: no variance in either run" in out, out
    assert "detectable 0.000" not in out.replace("  ", " ") and "0.05: 2" not in out
    assert (
        "  reward              0.000  (95% CI undefined: no variance, every example's mean is 0.000), 4 examples"
        in out
    )
    js = subprocess.run(
        [sys.executable, "-m", "verifiers_lite.cli", "compare", str(a), str(b), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    data = json.loads(js.stdout)
    assert data["undefined"].startswith("no variance in either run") and data[
        "examples_needed"
    ] == {"0.05": None, "0.1": None}


def test_a_one_example_run_has_no_interval_anywhere(zero_runs):
    _, _, one = zero_runs
    out = vf.load_results(one)
    s = out.summary
    # one example, three rollouts: no spread between examples to measure
    assert math.isnan(s["reward_stderr"]) and all(math.isnan(x) for x in s["reward_ci"])
    assert s["reward_ci_undefined"] == "one example"
    assert "0.000  (95% CI undefined: one example)" in repr(out)
    assert "95% CI undefined: one example" in out._repr_html_()
    table = format_table(run_summary(list(out.rows), 3, 1.0), "t", {})
    assert "reward                0.000  (95% CI undefined: one example)" in table, table
    c = vf.compare_runs(one, one)
    assert (
        c.undefined == "one shared example"
        and "p-value               undefined: one shared example" in str(c)
    )
    with pytest.raises(ValueError, match="undefined: one example"):
        vf.examples_needed(one, 0.1)


def test_all_zero_summary_and_the_live_widget_name_the_reason(zero_runs):
    from verifiers_lite.core.progress import RunStats
    from verifiers_lite.ui.notebook.summary_html import final_frame_html

    a, _, _ = zero_runs
    out = vf.load_results(a)
    s = out.summary
    assert s["reward_stderr"] == 0.0 and all(math.isnan(x) for x in s["reward_ci"])
    assert s["reward_ci_undefined"] == "no variance, every example's mean is 0.000"
    assert s["metrics_ci_undefined"] == {
        "never_right": "no variance, every example's mean is 0.000"
    }
    assert "95% CI [0.000, 0.000]" not in repr(out) and "no variance" in repr(out)
    frame = vf.compare([a])
    assert frame.loc[0, "reward_ci_undefined"] == "no variance, every example's mean is 0.000"
    stats = RunStats(total=len(out))
    stats.add(list(out.rows))  # what the widget saw as the groups were scored
    assert (
        stats.reward_text()
        == "0.000  (95% CI undefined: no variance, every example's mean is 0.000)"
    )
    frame = html.unescape(final_frame_html("rollouts", stats, ""))
    assert "95% CI undefined: no variance, every example's mean is 0.000" in frame, frame
