"""Run discovery: what is served under the given roots, ids, and the status of a dead writer."""

from __future__ import annotations

import json
import os
import time

from tests.ui.viewer.helpers import make_row
from verifiers_lite.results.store import ResultsStore
from verifiers_lite.ui.viewer.runs import MAX_DEPTH, STALE_AFTER_S, RunRegistry


def write_run(path, status=None):
    store = ResultsStore(path, fsync=False)
    store.open({"env_id": "e", "model": "m", **({"status": status} if status else {})})
    store.append_group([make_row(0, 0, 1.0)])
    store.close()
    return path


def test_only_runs_under_the_roots_are_found(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    write_run(root / "a" / "20260101")
    write_run(root / "b")
    write_run(outside / "secret")
    write_run(root / ".hidden" / "run")
    (root / "linked").symlink_to(outside / "secret")  # a symlinked directory is not followed
    (root / "c").mkdir()
    (root / "c" / "results.jsonl").symlink_to(outside / "secret" / "results.jsonl")  # nor a file
    deep = root.joinpath(*[f"d{i}" for i in range(MAX_DEPTH + 1)])
    write_run(deep)
    reg = RunRegistry([root])
    ids = sorted(r.run_id for r in reg.refresh())
    assert ids == ["a~20260101", "b"]
    assert (
        reg.get("linked") is None and reg.get("../outside/secret") is None and reg.get("c") is None
    )


def test_ids_stay_stable_as_runs_appear(tmp_path):
    write_run(tmp_path / "x")
    reg = RunRegistry([tmp_path])
    first = reg.refresh()[0]
    write_run(tmp_path / "a")  # sorts before x
    runs = {r.run_id: r for r in reg.refresh()}
    assert runs["x"] is first and set(runs) == {"a", "x"}


def test_status_of_finished_running_and_stale_runs(tmp_path):
    done = write_run(tmp_path / "done", status="completed")
    write_run(tmp_path / "live")
    dead = write_run(tmp_path / "dead")
    old = time.time() - STALE_AFTER_S - 60
    for f in dead.iterdir():
        os.utime(f, (old, old))
    reg = RunRegistry([tmp_path])
    status = {r.run_id: r.summary()["status"] for r in reg.refresh()}
    assert status == {"done": "completed", "live": "running", "dead": "stale"}
    assert json.loads((done / "metadata.json").read_text())["status"] == "completed"
