"""``metadata.json`` read through the typed run metadata: saved runs still load, a new run writes
only documented keys, a wrong file is refused naming what is wrong."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import verifiers_lite as vf
from verifiers_lite.results.row_index import RowIndex
from verifiers_lite.results.run_metadata import RUN_METADATA_KEYS, read_run_metadata
from verifiers_lite.ui.viewer.runs import Run

SAVED_RUN = Path(__file__).parent / "data" / "saved_run"
"""A run saved before the metadata was typed (two examples, two rollouts each)."""


def test_a_run_saved_before_the_metadata_was_typed_loads_as_it_was_written(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(SAVED_RUN, run_dir)
    written = json.loads((SAVED_RUN / "metadata.json").read_text(encoding="utf-8"))
    assert read_run_metadata(run_dir) == written
    loaded = vf.load_results(run_dir)
    assert loaded.metadata == written and len(loaded) == 4
    assert Run("r", run_dir, RowIndex(run_dir / "results.jsonl")).metadata() == written


def test_a_new_run_writes_only_documented_keys(tmp_path: Path) -> None:
    env = vf.SingleTurnEnv(
        dataset=[{"question": "2+2", "answer": "4"}],
        rubric=vf.Rubric([lambda completion, answer: float(answer in completion[-1]["content"])]),
    )
    env.evaluate_sync(
        vf.ScriptedClient(lambda m: "4"),
        "echo",
        rollouts_per_example=2,
        results_path=tmp_path / "run",
        cache=tmp_path / "cache.sqlite",
    )
    written = json.loads((tmp_path / "run" / "metadata.json").read_text(encoding="utf-8"))
    assert set(written) <= RUN_METADATA_KEYS, set(written) - RUN_METADATA_KEYS
    assert "cache" in written and "sessions" in written
    assert read_run_metadata(tmp_path / "run") == written


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ('{"num_examples": "two"}', "'num_examples' must be int"),
        ('{"resumed": 1}', "'resumed' must be bool"),
        ('{"score_rollouts": true, "num_rollouts": true}', "'num_rollouts' must be int"),
        ("[1, 2]", "must be a JSON object"),
        ('{"model": ', "is not valid JSON"),
    ],
)
def test_a_wrong_metadata_file_is_refused_naming_what_is_wrong(
    tmp_path: Path, content: str, named: str
) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(SAVED_RUN, run_dir)
    (run_dir / "metadata.json").write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match="metadata.json") as err:
        vf.load_results(run_dir)
    assert named in str(err.value)
    assert (
        Run("r", run_dir, RowIndex(run_dir / "results.jsonl")).metadata() == {}
    )  # the viewer shows no facts


def test_unknown_keys_and_missing_figures_are_kept(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    meta = {"model": "m", "reward_mean": None, "seed": None, "written_by_a_newer_version": [1]}
    (run_dir / "metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    assert read_run_metadata(run_dir) == meta


def test_a_parquet_files_metadata_is_read_through_the_same_check(tmp_path: Path) -> None:
    """A run saved as Parquet loads with its metadata as written; a wrong kind in the schema's
    metadata is refused naming the file and the key, as in ``metadata.json``."""
    pq = pytest.importorskip("pyarrow.parquet")
    run = vf.load_results(SAVED_RUN)
    path = run.to_parquet(tmp_path / "run.parquet")
    assert vf.load_results(path).metadata == run.metadata
    table = pq.read_table(path)
    wrong = {**run.metadata, "num_examples": "two"}
    bad = tmp_path / "bad.parquet"
    pq.write_table(
        table.replace_schema_metadata({b"verifiers_lite": json.dumps(wrong).encode()}), bad
    )
    with pytest.raises(ValueError, match="'num_examples' must be int") as err:
        vf.load_results(bad)
    assert "bad.parquet" in str(err.value)


def test_a_run_split_by_task_names_its_task_with_a_documented_key(tmp_path: Path) -> None:
    (part,) = vf.load_results(SAVED_RUN).by_task().values()
    assert part.metadata["task"] == "default"
    assert set(part.metadata) <= RUN_METADATA_KEYS, set(part.metadata) - RUN_METADATA_KEYS


def test_vf_lite_rescore_refuses_a_wrong_metadata_file_naming_the_key(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(SAVED_RUN, run_dir)
    meta = json.loads((run_dir / "metadata.json").read_text(encoding="utf-8"))
    (run_dir / "metadata.json").write_text(json.dumps({**meta, "resumed": 1}), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "verifiers_lite.cli", "rescore", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "'resumed' must be bool" in proc.stderr, proc.stderr


def test_a_runs_metadata_is_typed_for_its_readers(mypy_errors) -> None:
    """``GenerateOutputs.metadata`` is :class:`RunMetadata`: a documented key reads with its type,
    a key the metadata does not have, or a value read as the wrong type, is a type error (mypy)."""
    errors = mypy_errors(
        "import verifiers_lite as vf\n"
        "def read(out: vf.GenerateOutputs) -> None:\n"
        "    mean: float | None = out.metadata['reward_mean']\n"
        "    task: str = out.metadata.get('task', 'default')\n"
        "    out.metadata['reward_means']\n"
        "    count: str = out.metadata['num_examples']\n"
    )
    assert errors == [(5, "typeddict-item"), (6, "assignment")]
