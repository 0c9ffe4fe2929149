"""A run written as an inspect_ai log, read back by inspect_ai's own reader and checked against
the run's rows: samples, messages, usage, scores, errors, metadata and the results' metrics
(computed here by hand)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import verifiers_lite as vf
from tests.interop.helpers import EXAMPLES, ROLLOUTS, thinking_run
from verifiers_lite.cli import main

inspect_log = pytest.importorskip("inspect_ai.log", reason="needs the inspect extra")


@pytest.fixture
def run(fake_server, tmp_path: Path) -> vf.GenerateOutputs:
    return thinking_run(fake_server, tmp_path / "run")


def test_one_sample_per_rollout_with_its_messages_usage_and_scores(run, tmp_path: Path) -> None:
    path = vf.export_inspect(run, tmp_path / "logs")
    assert path.suffix == ".eval" and path.parent == tmp_path / "logs"
    log = inspect_log.read_eval_log(str(path))
    assert len(log.samples) == EXAMPLES * ROLLOUTS
    by_key = {(s.id, s.epoch): s for s in log.samples}
    for row in run.rows:
        sample = by_key[(row["example_id"], row["rollout_index"] + 1)]
        assert sample.target == row["answer"]
        assert sample.metadata["verifiers_lite"]["task"] == row["task"]
        messages = row["prompt"] + row["completion"]
        assert [m.role for m in sample.messages] == [m["role"] for m in messages]
        if row["error"]:
            assert sample.error is not None and sample.error.message == row["error"]["message"]
            assert sample.scores is None
            continue
        assert sample.error is None
        first = sample.messages[len(row["prompt"])]
        reasoning = [c.reasoning for c in first.content if c.type == "reasoning"]
        assert reasoning == [row["completion"][0]["reasoning_content"]]
        call = row["completion"][0]["tool_calls"][0]
        assert first.tool_calls[0].function == call["function"]["name"] == "calculator"
        assert first.tool_calls[0].id == call["id"]
        tool = sample.messages[len(row["prompt"]) + 1]
        assert (tool.tool_call_id, tool.text) == (call["id"], row["completion"][1]["content"])
        usage = sample.model_usage["fake-think"]
        assert (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens) == (
            row["usage"]["prompt_tokens"],
            row["usage"]["completion_tokens"],
            row["usage"]["reasoning_tokens"],
        )
        expected = {**row["metrics"], "reward": row["reward"]}
        assert {n: s.value for n, s in sample.scores.items()} == expected
    assert sum(1 for s in log.samples if s.error) == 1


def test_the_log_names_the_model_sampling_dataset_and_manifest(run, tmp_path: Path) -> None:
    log = inspect_log.read_eval_log(str(vf.export_inspect(run, tmp_path / "one.eval")))
    assert log.eval.model == "fake-think"
    assert log.eval.task == log.eval.dataset.name == "calculator"
    assert log.eval.model_generate_config.temperature == 0.0
    assert log.eval.model_generate_config.max_tokens == 64
    saved = log.eval.metadata["verifiers_lite"]
    assert saved["sampling_args"] == run.metadata["sampling_args"]
    assert saved["sessions"][0]["manifest"] == run.metadata["sessions"][0]["manifest"]
    assert log.eval.dataset.sample_ids == list(range(EXAMPLES))


def test_results_hold_inspects_metrics_and_the_clustered_ones(run, tmp_path: Path) -> None:
    """inspect's mean/stderr: each sample's epochs averaged, then the plain mean and standard
    error of those; the clustered figures: CR1 over all rollouts. Both computed here by hand."""
    log = inspect_log.read_eval_log(str(vf.export_inspect(run, tmp_path / "one.eval")))
    scores = {s.name: s.metrics for s in log.results.scores}
    assert set(scores) == {*run.rows[1]["metrics"], "reward"}
    scored = [r for r in run.rows if r["reward"] is not None]
    per_example: dict[int, list[float]] = {}
    for r in scored:
        per_example.setdefault(r["example_id"], []).append(r["reward"])
    means = np.array([np.mean(v) for v in per_example.values()])
    reward = scores["reward"]
    assert reward["mean"].value == pytest.approx(means.mean())
    assert reward["stderr"].value == pytest.approx(means.std(ddof=1) / math.sqrt(len(means)))
    values = np.array([r["reward"] for r in scored])
    grand = values.mean()
    resid = [sum(v - grand for v in vs) for vs in per_example.values()]
    g = len(resid)
    clustered = math.sqrt(sum(x * x for x in resid) * g / (g - 1)) / len(values)
    assert reward["clustered_mean"].value == pytest.approx(grand)
    assert reward["clustered_stderr"].value == pytest.approx(clustered)
    assert log.results.total_samples == EXAMPLES * ROLLOUTS
    assert log.results.completed_samples == EXAMPLES * ROLLOUTS - 1


def test_vf_lite_export_writes_the_log_and_refuses_what_is_not_a_run(run, tmp_path, capsys) -> None:
    out = tmp_path / "cli-logs"
    assert (
        main(["export", str(run.metadata["results_path"]), "--format", "inspect", "-o", str(out)])
        == 0
    )
    written = list(out.glob("*.eval"))
    assert len(written) == 1 and str(written[0]) in capsys.readouterr().out
    assert len(inspect_log.read_eval_log(str(written[0])).samples) == EXAMPLES * ROLLOUTS
    assert main(["export", str(tmp_path / "nothing"), "--format", "inspect"]) == 2
    assert "no such run directory" in capsys.readouterr().err


def test_without_the_extra_the_error_names_it(run, tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with pytest.raises(ImportError, match=r"pip install 'verifiers_lite\[inspect\]'"):
        vf.export_inspect(run, tmp_path / "x.eval")
    assert not (tmp_path / "x.eval").exists()
