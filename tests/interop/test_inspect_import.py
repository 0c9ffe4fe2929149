"""inspect_ai logs (written by inspect_ai itself against the conversation model) read as runs:
rows, statistics clustered by sample id, paired comparison, the CLI, and both round trips."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import verifiers_lite as vf
from tests.interop.helpers import comparable, thinking_run
from tests.interop.inspect_runner import TASKS, run_inspect
from verifiers_lite.cli import main
from verifiers_lite.testing.conversation_model import MODEL
from verifiers_lite.testing.conversation_server import ConversationServerProcess

inspect_log = pytest.importorskip("inspect_ai.log", reason="needs the inspect extra")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same task by inspect_ai with two system prompts (the model answers each differently)."""
    out = tmp_path_factory.mktemp("inspect-logs")
    with ConversationServerProcess() as server:
        a = run_inspect(f"{TASKS}/arithmetic.py@sums", server.base_url, MODEL, out / "a")
        b = run_inspect(
            f"{TASKS}/arithmetic.py@sums",
            server.base_url,
            MODEL,
            out / "b",
            {"system": "Reply with digits only."},
        )
    return a[0], b[0]


def _float(value: str) -> float:
    return {"C": 1.0, "I": 0.0}[value]


def test_each_sample_and_epoch_is_a_row(logs) -> None:
    log = inspect_log.read_eval_log(str(logs[0]))
    run = vf.load_inspect_log(logs[0])
    assert len(run) == len(log.samples) == 8
    rows = {(r["env_state"]["inspect"]["id"], r["rollout_index"]): r for r in run.rows}
    # string ids: the example id is the sample's position in the dataset
    assert [r["example_id"] for r in run.rows] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert log.eval.dataset.sample_ids == ["s0", "s1", "s2", "s3"]
    for s in log.samples:
        row = rows[(s.id, s.epoch - 1)]
        assert row["reward"] == _float(s.scores["match"].value)  # the headline scorer
        assert row["metrics"] == {n: _float(v.value) for n, v in s.scores.items()}
        assert row["answer"] == s.target and row["info"] == s.metadata
        assert row["completion"] == [{"role": "assistant", "content": s.output.completion}]
        assert [m["role"] for m in row["prompt"]] == ["system", "user"]
        kept = row["env_state"]["inspect"]["scores"]["match"]
        assert (kept["value"], kept["explanation"]) == (
            s.scores["match"].value,
            s.scores["match"].explanation,
        )
        usage = s.model_usage[f"openai-api/vfstub/{MODEL}"]
        assert row["usage"] == {
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
        }
    assert run.metadata["model"] == f"openai-api/vfstub/{MODEL}"
    assert run.metadata["rollouts_per_example"] == 2


def test_statistics_are_clustered_by_sample_id(logs) -> None:
    log = inspect_log.read_eval_log(str(logs[0]))
    per: dict[str, list[float]] = {}
    for s in log.samples:
        per.setdefault(s.id, []).append(_float(s.scores["match"].value))
    values = np.concatenate([np.array(v) for v in per.values()])
    resid = [sum(x - values.mean() for x in v) for v in per.values()]
    g = len(resid)
    expected = math.sqrt(sum(r * r for r in resid) * g / (g - 1)) / len(values)
    summary = vf.load_results(logs[0]).summary  # load_results reads .eval files too
    assert summary["reward_mean"] == pytest.approx(values.mean())
    assert summary["reward_stderr"] == pytest.approx(expected)


def test_two_inspect_logs_compare_paired_by_sample_id(logs, capsys) -> None:
    la, lb = (inspect_log.read_eval_log(str(p)) for p in logs)
    mean = {}
    for name, log in (("a", la), ("b", lb)):
        per: dict[str, list[float]] = {}
        for s in log.samples:
            per.setdefault(s.id, []).append(_float(s.scores["match"].value))
        mean[name] = {k: float(np.mean(v)) for k, v in per.items()}
    diffs = [mean["b"][k] - mean["a"][k] for k in mean["a"]]
    c = vf.compare_runs(logs[0], logs[1])
    assert c.shared == 4
    assert c.diff == pytest.approx(np.mean(diffs))
    assert main(["compare", str(logs[0]), str(logs[1]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["shared"] == 4


def test_a_run_exported_then_imported_gives_the_same_rows_and_summary(
    fake_server, tmp_path
) -> None:
    run = thinking_run(fake_server, tmp_path / "run")
    back = vf.load_inspect_log(vf.export_inspect(run, tmp_path / "run.eval"))
    assert [comparable(r) for r in back.rows] == [comparable(r) for r in run.rows]
    assert back.rewards == run.rewards
    assert json.dumps(back.summary, default=str) == json.dumps(run.summary, default=str)
    assert json.dumps(back.metadata, default=str) == json.dumps(run.metadata, default=str)


def test_an_inspect_log_imported_then_exported_reads_back_equal(logs, tmp_path) -> None:
    original = inspect_log.read_eval_log(str(logs[0]))
    again = inspect_log.read_eval_log(
        str(vf.export_inspect(vf.load_inspect_log(logs[0]), tmp_path / "x.eval"))
    )
    assert len(again.samples) == len(original.samples)
    pairs = zip(
        sorted(original.samples, key=lambda s: (s.id, s.epoch)),
        sorted(again.samples, key=lambda s: (s.id, s.epoch)),
        strict=True,
    )
    for s, t in pairs:
        assert (t.id, t.epoch, t.input, t.target) == (s.id, s.epoch, s.input, s.target)
        assert [(m.role, m.text) for m in t.messages] == [(m.role, m.text) for m in s.messages]
        assert t.scores == s.scores
        assert {k: v for k, v in t.metadata.items() if k != "verifiers_lite"} == s.metadata
        assert list(t.model_usage.values()) == list(s.model_usage.values())
    assert again.eval.model == original.eval.model


def test_vf_lite_view_reads_an_eval_log_as_a_run_directory(logs, tmp_path) -> None:
    from verifiers_lite.cli.commands import _as_run_dirs

    (run_dir,) = _as_run_dirs([logs[0]], tmp_path)
    assert [comparable(r) for r in vf.load_results(run_dir).rows] == [
        comparable(r) for r in vf.load_inspect_log(logs[0]).rows
    ]
