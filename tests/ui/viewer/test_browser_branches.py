"""A program's rollout in the transcript, in Debian's headless Chromium: one section per branch
of its conversation (a program that starts a fresh conversation makes a branch), each the
conversation as the branch's last call sent it and the answer. Screenshot:
viewer-branches.png in $VF_TEST_ARTIFACTS (default tests/ui/viewer/artifacts/)."""

from __future__ import annotations

import pytest

import verifiers_lite as vf
from tests.helpers.browser import CHROMIUM, NO_CHROMIUM, NO_PLAYWRIGHT
from tests.programs.helpers import agent, child_env, program_env
from tests.ui.viewer.helpers import run_id
from tests.ui.viewer.viewer_proc import ViewerProcess

pytestmark = pytest.mark.slow
sync_api = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT)
if CHROMIUM is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)


@pytest.fixture
def branches_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", child_env()["PYTHONPATH"])  # the program imports the tests
    replies = iter(["a1", "a2", "s1", "a3"])
    env = program_env(agent("branches"), "start")
    out = env.evaluate_sync(
        vf.ScriptedClient(lambda m: next(replies)),
        "m",
        results_path=str(tmp_path / "evals" / "branches"),
        progress=False,
    )
    assert out.rows[0]["error"] is None, out.rows[0]["error"]
    with ViewerProcess(str(tmp_path)) as viewer:
        yield viewer


def test_every_branch_of_a_program_is_shown(branches_run, page, artifacts_dir):
    pg = page
    pg.goto(branches_run.url + f"#/runs/{run_id('branches')}/rows/0/0")
    pg.wait_for_selector("#branches")
    sections = pg.locator("#branches section.branch")
    assert sections.count() == 2
    # What the program sent (tests/programs/agents.py, "branches"), and the scripted answers.
    main = ["main", "start", "a1", "go on", "a2", "summary: s1", "a3"]
    helper = ["summariser", "sum up", "s1"]
    shown = [s.locator(".msg > .content").all_inner_texts() for s in sections.all()]
    assert shown == [main, helper]
    headers = [s.locator(".divider").first.text_content() or "" for s in sections.all()]
    assert "3 calls (calls 1, 2, 4)" in headers[0] and "ended on it" in headers[0]
    assert "1 call (calls 3)" in headers[1] and "ended on it" not in headers[1]
    # The conversation the row keeps is still the one it ended on, shown apart.
    completion = pg.locator("#conversation .msg > .content").all_inner_texts()
    assert completion[-1] == "a3"
    assert pg.errors == []
    pg.locator("#branches").screenshot(path=str(artifacts_dir / "viewer-branches.png"))
