"""``metadata.json`` records the run directory's format version; a reader refuses a newer one,
naming the version found and the one it reads, before it reads or changes anything."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import verifiers_lite as vf
from verifiers_lite.core.errors import RunFormatError
from verifiers_lite.results.run_metadata import FORMAT_VERSION, read_run_metadata

SAVED_RUN = Path(__file__).parent / "data" / "saved_run"


def _env() -> vf.SingleTurnEnv:
    return vf.SingleTurnEnv(
        dataset=[{"question": "2+2", "answer": "4"}, {"question": "3+3", "answer": "6"}],
        rubric=vf.Rubric([lambda completion, answer: float(answer in completion[-1]["content"])]),
    )


def _run(path: Path) -> vf.GenerateOutputs:
    return _env().evaluate_sync(
        vf.ScriptedClient(lambda m: "4"),
        "echo",
        rollouts_per_example=2,
        results_path=path,
        progress=False,
    )


def test_a_run_writes_its_format_version_and_reads_it_back(tmp_path: Path) -> None:
    out = _run(tmp_path / "run")
    written = json.loads((tmp_path / "run" / "metadata.json").read_text(encoding="utf-8"))
    assert FORMAT_VERSION == 1
    assert written["format_version"] == 1 and out.metadata["format_version"] == 1
    assert read_run_metadata(tmp_path / "run")["format_version"] == 1
    saved = vf.load_results(tmp_path / "run")
    assert saved.metadata["format_version"] == 1 and len(saved) == 4


def test_a_saved_copy_records_the_format_version(tmp_path: Path) -> None:
    out = _env().evaluate_sync(vf.ScriptedClient(lambda m: "4"), "echo", progress=False)
    out.save(tmp_path / "copy")
    written = json.loads((tmp_path / "copy" / "metadata.json").read_text(encoding="utf-8"))
    assert written["format_version"] == FORMAT_VERSION


def test_a_run_saved_before_versions_reads_as_the_first(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(SAVED_RUN, run_dir)
    assert "format_version" not in json.loads((run_dir / "metadata.json").read_text())
    assert len(vf.load_results(run_dir)) == 4


def _too_new(run_dir: Path) -> None:
    meta = json.loads((run_dir / "metadata.json").read_text(encoding="utf-8"))
    meta["format_version"] = FORMAT_VERSION + 1
    (run_dir / "metadata.json").write_text(json.dumps(meta), encoding="utf-8")


def test_a_newer_format_is_refused_naming_both_versions(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(SAVED_RUN, run_dir)
    _too_new(run_dir)
    with pytest.raises(RunFormatError) as err:
        vf.load_results(run_dir)
    assert isinstance(err.value, vf.VerifiersError) and isinstance(err.value, ValueError)
    text = str(err.value)
    assert f"version {FORMAT_VERSION + 1}" in text and f"format version {FORMAT_VERSION}" in text
    with pytest.raises(RunFormatError):
        read_run_metadata(run_dir)


def test_resuming_a_run_of_a_newer_format_is_refused_before_anything_changes(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    _run(run_dir)
    _too_new(run_dir)
    before = {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()}
    with pytest.raises(RunFormatError, match=f"version {FORMAT_VERSION + 1}"):
        _run(run_dir)
    assert {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()} == before
