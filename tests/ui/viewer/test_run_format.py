"""A run written in a newer format than this version reads: the viewer says so (the reason on the
Runs page, a 409 naming both versions on the run's page) rather than showing an empty run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.ui.viewer.helpers import run_id
from tests.ui.viewer.viewer_proc import ViewerProcess
from verifiers_lite.results.run_metadata import FORMAT_VERSION

SAVED_RUN = Path(__file__).parents[2] / "results" / "data" / "saved_run"


def test_a_newer_run_format_is_named_not_shown_empty(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for name in ("old", "new"):
        shutil.copytree(SAVED_RUN, root / "evals" / name)
    meta_path = root / "evals" / "new" / "metadata.json"
    newer = FORMAT_VERSION + 1
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "format_version": newer}))
    with ViewerProcess(str(root)) as viewer:
        listed = {r["run_id"]: r for r in viewer.json("/api/runs")["runs"]}
        assert listed[run_id("new")]["status"] == "unreadable"
        assert str(newer) in listed[run_id("new")]["error"]
        assert listed[run_id("old")]["status"] != "unreadable"
        assert listed[run_id("old")]["num_rollouts"] > 0
        status, body = viewer.get(f"/api/runs/{run_id('new')}")
        assert status == 409
        assert str(newer) in body["detail"] and str(FORMAT_VERSION) in body["detail"]
        status, _ = viewer.get(f"/api/runs/{run_id('old')}")
        assert status == 200
