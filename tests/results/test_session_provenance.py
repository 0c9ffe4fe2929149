"""Provenance per session: each call on a results_path appends its own manifest (client,
endpoints, /v1/models, server builds, versions), never overwriting an earlier one; a session
that ran nothing says so; a resume by another model client is refused before any request,
naming both, unless allowed, and then each row names the session that made it. The /v1/models
entries and rewards are checked against the server and the test's own arithmetic."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

import verifiers_lite as vf
from tests.helpers.envs import boxed_correct, make_env
from verifiers_lite.results.store import read_rows
from verifiers_lite.testing.fake_server import FakeServerProcess


def _meta(run: Path) -> dict:
    return json.loads((run / "metadata.json").read_text())


def _files(run: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(run.iterdir()) if p.is_file()}


def _listed(server: FakeServerProcess, model: str) -> dict:
    listed = json.loads(urllib.request.urlopen(f"{server.base_url}/models", timeout=5).read())[
        "data"
    ]
    return next(m for m in listed if m["id"] == model)


def _first_run(server: FakeServerProcess, run: Path, **client_kwargs) -> dict:
    make_env(3).evaluate_sync(
        vf.ChatClient(server.base_url, **client_kwargs),
        "fake-arith",
        rollouts_per_example=2,
        results_path=str(run),
        progress=False,
    )
    return _meta(run)


def test_each_session_appends_its_manifest_and_one_that_ran_nothing_says_so(fake_server, tmp_path):
    run = tmp_path / "run"
    fake_server.configure(system_fingerprint="fp_first")
    first = _first_run(fake_server, run)["sessions"][0]["manifest"]
    fake_server.configure(system_fingerprint="fp_second")
    requests = fake_server.stats()["requests"]
    make_env(3).evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=2,
        results_path=str(run),
        progress=False,
    )  # everything saved: runs nothing
    assert fake_server.stats()["requests"] == requests
    meta = _meta(run)
    one, two = meta["sessions"]
    assert one["manifest"] == first and "manifest" not in meta  # appended, never overwritten
    assert one["manifest"]["endpoints"] == [
        {
            "client": "ChatClient",
            "endpoint": fake_server.base_url,
            "model": _listed(fake_server, "fake-arith"),
        }
    ]
    assert one["manifest"]["system_fingerprints"] == ["fp_first"] and one["rollouts"] == 6
    assert two["rollouts"] == 0 and two["manifest"]["system_fingerprints"] == []  # it made no row
    assert [e["endpoint"] for e in two["manifest"]["endpoints"]] == [fake_server.base_url]
    assert two["manifest"]["library_version"] == vf.__version__
    assert {r["session"] for r in read_rows(run / "results.jsonl")} == {0}


def test_a_resume_by_another_client_or_endpoint_is_refused_before_any_request_naming_both(
    fake_server, tmp_path
):
    run = tmp_path / "run"
    _first_run(fake_server, run)
    files, requests = _files(run), fake_server.stats()["requests"]
    scripted = vf.ScriptedClient("999")
    with pytest.raises(vf.ResumeMismatchError) as info:  # two examples more: rows are missing
        make_env(5).evaluate_sync(
            scripted, "fake-arith", rollouts_per_example=2, results_path=str(run), progress=False
        )
    msg = str(info.value)
    assert (
        f"ChatClient at {fake_server.base_url}" in msg
        and "ScriptedClient (no HTTP model endpoint)" in msg
    )
    assert "allow_client_change=True" in msg and "--allow-client-change" in msg
    with FakeServerProcess() as other, pytest.raises(vf.ResumeMismatchError) as info:
        make_env(5).evaluate_sync(
            vf.ChatClient(other.base_url),
            "fake-arith",
            rollouts_per_example=2,
            results_path=str(run),
            progress=False,
        )
    assert other.base_url in str(info.value) and fake_server.base_url in str(info.value)
    assert (
        scripted.requests == 0
        and fake_server.stats()["requests"] == requests
        and _files(run) == files
    )


def test_the_same_endpoint_identity_on_another_port_resumes(fake_server, tmp_path):
    """The embedded model names its endpoint by its model file, not its per-process port."""
    run = tmp_path / "run"
    _first_run(fake_server, run, cache_identity="embedded:model.gguf:123")
    with FakeServerProcess() as other:
        out = make_env(5).evaluate_sync(
            vf.ChatClient(other.base_url, cache_identity="embedded:model.gguf:123"),
            "fake-arith",
            rollouts_per_example=2,
            results_path=str(run),
            progress=False,
        )
        assert other.stats()["requests"] == 4 and len(out.rows) == 10
    (entry,) = _meta(run)["sessions"][1]["manifest"]["endpoints"]
    assert entry["endpoint"] == other.base_url and entry["identity"] == "embedded:model.gguf:123"


def test_an_allowed_client_change_fills_the_missing_rows_and_each_row_names_its_session(
    fake_server, tmp_path
):
    run = tmp_path / "run"
    before = _first_run(fake_server, run)["sessions"]
    scripted = vf.ScriptedClient("\\boxed{999}")
    env = make_env(5)
    out = env.evaluate_sync(
        scripted,
        "fake-arith",
        rollouts_per_example=2,
        results_path=str(run),
        progress=False,
        allow_client_change=True,
    )
    assert scripted.requests == 4
    for row in out.rows:  # old rows from the server (session 0), the new ones scripted (session 1)
        assert row["session"] == (0 if row["example_id"] < 3 else 1)
        assert row["reward"] == boxed_correct(row["completion"], row["answer"])
        if row["session"] == 1:
            assert row["completion"][-1]["content"] == "\\boxed{999}" and row["reward"] == 0.0
    meta = _meta(run)
    assert meta["sessions"][0] == before[0]
    assert meta["sessions"][1]["rollouts"] == 4
    (entry,) = meta["sessions"][1]["manifest"]["endpoints"]
    assert entry["client"] == "ScriptedClient" and entry["endpoint"] is None
    # The re-scored copy keeps the original's provenance, session by session, and each row's session.
    fixed = vf.rescore(run, env)
    assert (
        fixed.metadata["sessions"]
        == meta["sessions"]
        == _meta(Path(fixed.metadata["results_path"]))["sessions"]
    )
    assert sorted((r["example_id"], r["session"]) for r in fixed.rows) == sorted(
        (r["example_id"], r["session"]) for r in out.rows
    )
    assert all("session" not in (r.get("env_state") or {}) for r in fixed.rows)
    assert sorted(out.to_pandas()["session"]) == [0] * 6 + [1] * 4


def test_a_run_saved_with_one_manifest_reads_it_as_its_last_session(fake_server, tmp_path):
    run = tmp_path / "run"
    meta = _first_run(fake_server, run)
    old = meta["sessions"][0].pop(
        "manifest"
    )  # as runs were saved: one manifest, rewritten by each session
    for e in old["endpoints"]:
        e.pop("client")  # an HTTP endpoint's entry did not name its client
    meta["manifest"] = old
    (run / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(vf.ResumeMismatchError, match="ScriptedClient"):
        make_env(5).evaluate_sync(
            vf.ScriptedClient("1"),
            "fake-arith",
            rollouts_per_example=2,
            results_path=str(run),
            progress=False,
        )
    make_env(5).evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=2,
        results_path=str(run),
        progress=False,
    )
    resumed = _meta(run)
    assert "manifest" not in resumed and resumed["sessions"][0]["manifest"] == old
    assert resumed["sessions"][1]["rollouts"] == 4
