"""``vf-lite compare RUN_A RUN_B`` in a subprocess on runs written by ``vf-lite eval``: the
figures (checked against scipy's paired t-test on the saved rows), the labels, exit codes."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from scipy import stats

import verifiers_lite as vf
from tests.cli.helpers import run_dir, vf_lite


def _eval(fake_server, tmp_path: Path, name: str, *args: str) -> Path:
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
        "3",
        "-q",
        "--no-plot",
        "-s",
        str(tmp_path / name),
        *args,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    return run_dir(tmp_path / name)


def _example_means(run: Path) -> dict[int, float]:
    acc: dict[int, list[float]] = {}
    for line in (run / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        acc.setdefault(row["example_id"], []).append(row["reward"])
    return {k: statistics.fmean(v) for k, v in acc.items()}


@pytest.fixture(scope="module")
def two_temperatures(fake_server_process, tmp_path_factory):
    fake_server_process.reset()
    fake_server_process.configure(latency_ms=0, correct_rate=0.5, faults=[])
    tmp = tmp_path_factory.mktemp("compare")
    cold = _eval(fake_server_process, tmp, "cold", "-T", "0.2", "--seed", "3")
    hot = _eval(fake_server_process, tmp, "hot", "-T", "1.2", "--seed", "3")
    other = _eval(fake_server_process, tmp, "other", "-T", "1.2", "--seed", "4")
    return tmp, cold, hot, other


def test_compare_prints_the_paired_figures(two_temperatures):
    tmp, cold, hot, _ = two_temperatures
    r = vf_lite("compare", str(cold), str(hot), cwd=tmp)
    assert r.returncode == 0, r.stderr
    a, b = _example_means(cold), _example_means(hot)
    d = [b[k] - a[k] for k in a]
    for needle in (
        "temperature=1.2 − temperature=0.2: paired over 8 shared examples",
        f"{statistics.fmean(d):+.3f} ± ",
        "paired t-test, 7 df",
        f"b better on {sum(x > 0 for x in d)}, tied on {sum(x == 0 for x in d)}, worse on {sum(x < 0 for x in d)}",
        "8 shared, 0 only in a, 0 only in b",
        "at 80% power",
        "to detect 0.05: ",
        "; 0.1: ",
        "largest per-example differences",
    ):
        assert needle in r.stdout, (needle, r.stdout)
    j = json.loads(
        vf_lite("compare", str(cold), str(hot), "--json", "--delta", "0.2", cwd=tmp).stdout
    )
    ref = stats.ttest_rel([b[k] for k in a], [a[k] for k in a])
    assert j["diff"] == pytest.approx(statistics.fmean(d)) and j["p_value"] == pytest.approx(
        ref.pvalue
    )
    assert j["ci"] == pytest.approx(list(ref.confidence_interval(0.95)))
    assert j["labels"] == ["temperature=0.2", "temperature=1.2"] and len(j["per_example"]) == 8
    assert set(j["examples_needed"]) == {"0.2"}


def test_runs_of_other_examples_and_bad_paths_exit_2(two_temperatures):
    tmp, cold, _, other = two_temperatures
    r = vf_lite("compare", str(cold), str(other), cwd=tmp)
    assert r.returncode == 2 and "different inputs under the same example ids" in r.stderr, r.stderr
    assert vf_lite("compare", str(cold), str(other), "--no-check-inputs", cwd=tmp).returncode == 0
    r = vf_lite("compare", str(cold), str(tmp / "nope"), cwd=tmp)
    assert r.returncode == 2 and "nope: no such run directory" in r.stderr
    r = vf_lite("compare", str(cold), str(tmp), cwd=tmp)
    assert r.returncode == 2 and "no results.jsonl" in r.stderr
    r = vf_lite("compare", str(cold), str(cold), "--delta", "0", cwd=tmp)
    assert r.returncode == 2 and "--delta must be a positive difference" in r.stderr


def test_runs_without_a_shared_example_exit_2(tmp_path):
    def run(ids: range, name: str) -> Path:
        rows = [
            {
                "example_id": i,
                "rollout_index": 0,
                "prompt": [{"role": "user", "content": f"q{i}"}],
                "answer": "1",
                "reward": 1.0,
            }
            for i in ids
        ]
        return vf.GenerateOutputs(rows, {"env_id": "toy", "model": "m"}).save(tmp_path / name)

    r = vf_lite("compare", str(run(range(0, 3), "a")), str(run(range(3, 5), "b")), cwd=tmp_path)
    assert r.returncode == 2
    assert "0 shared, 3 only in a (0, 1, 2), 2 only in b (3, 4)" in r.stdout
    assert "share no scored example" in r.stderr
