"""The run page's Reproducibility block in headless Chromium: library and Python versions, the
environment's code hash, the model endpoint's /v1/models entry, the server's system fingerprint,
and, on a re-scored run, the run it came from."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import urllib.parse
import urllib.request

import pytest

import verifiers_lite as vf
from tests.ui.viewer.viewer_proc import ViewerProcess

pytestmark = pytest.mark.slow


def test_run_page_shows_the_manifest_and_where_a_rescore_came_from(fake_server, tmp_path, page):
    fake_server.configure(system_fingerprint="fp_viewer_7")
    env = vf.load_environment("arithmetic", num_examples=3)
    run = tmp_path / "runs" / "first"
    env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=2,
        results_path=str(run),
        progress=False,
    )
    vf.rescore(run, env.rubric, results_path=tmp_path / "runs" / "fixed")
    listed = json.loads(urllib.request.urlopen(f"{fake_server.base_url}/models", timeout=5).read())[
        "data"
    ]
    owner = next(m for m in listed if m["id"] == "fake-arith")["owned_by"]
    with open(importlib.util.find_spec(env.source_module).origin, "rb") as f:
        file_hash = hashlib.sha256(f.read()).hexdigest()
    with ViewerProcess(str(tmp_path / "runs")) as viewer:
        page.goto(f"{viewer.url}#/runs/{urllib.parse.quote('first')}")
        page.wait_for_selector("#reproducibility")
        text = page.inner_text("#reproducibility")
        assert vf.__version__ in text and sys.version.split(" ")[0] in text
        assert f"{fake_server.base_url} · fake-arith ({owner})" in text
        assert "fp_viewer_7" in text and file_hash[:16] in text
        assert "re-scored from" not in text
        page.goto(f"{viewer.url}#/runs/{urllib.parse.quote('fixed')}")
        page.wait_for_function(
            "document.querySelector('#reproducibility') && "
            "document.querySelector('#reproducibility').innerText.includes('re-scored from')"
        )
        assert str(run) in page.inner_text("#reproducibility")
        assert page.errors == []  # type: ignore[attr-defined]


def test_run_page_shows_each_session_s_manifest_and_reads_a_single_manifest_run(
    fake_server,
    tmp_path,
    page,
):
    env = vf.load_environment("arithmetic", num_examples=2)
    run = tmp_path / "runs" / "resumed"
    for client in (
        vf.ChatClient(fake_server.base_url),
        vf.ScriptedClient("1"),
    ):  # the second runs nothing
        env.evaluate_sync(
            client, "fake-arith", results_path=str(run), progress=False, allow_client_change=True
        )
    single = tmp_path / "runs" / "single"
    env.evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-arith", results_path=str(single), progress=False
    )
    meta = json.loads((single / "metadata.json").read_text())
    meta["manifest"] = meta["sessions"][0].pop("manifest")  # as runs were saved with one manifest
    (single / "metadata.json").write_text(json.dumps(meta))
    with ViewerProcess(str(tmp_path / "runs")) as viewer:
        page.goto(f"{viewer.url}#/runs/{urllib.parse.quote('resumed')}")
        page.wait_for_selector("#reproducibility .session-manifest")
        blocks = page.locator("#reproducibility .session-manifest").all_inner_texts()
        assert len(blocks) == 2
        assert (
            "Session 1" in blocks[0]
            and f"ChatClient · {fake_server.base_url} · fake-arith" in blocks[0]
        )
        assert "Session 2 (resume) · ran no rollouts" in blocks[1] and "ScriptedClient" in blocks[1]
        assert "ScriptedClient" not in blocks[0]
        page.goto(f"{viewer.url}#/runs/{urllib.parse.quote('single')}")
        page.wait_for_function(
            "document.querySelector('#reproducibility') && "
            "!document.querySelector('#reproducibility h4.session')"
        )
        text = page.inner_text("#reproducibility")
        assert (
            vf.__version__ in text
            and "Session" not in text
            and "fake-arith" in text
            and fake_server.base_url in text
        )
        assert page.errors == []  # type: ignore[attr-defined]
