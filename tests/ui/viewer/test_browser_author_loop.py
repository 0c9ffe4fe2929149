"""An author's bug and a reward's explanation in the viewer's transcript, in headless Chromium:
the errored rollout shows the traceback from the author's frame (file, line, function, source
line), the scored one its explanation beside the score. The page is kept as a screenshot."""

from __future__ import annotations

import inspect
import urllib.parse

import pytest

import verifiers_lite as vf
from tests.helpers import author_env
from tests.ui.viewer.viewer_proc import ViewerProcess

pytestmark = pytest.mark.slow


def test_transcript_shows_the_authors_traceback_and_the_scores_explanation(
    fake_server, tmp_path, page, artifacts_dir
):
    out = author_env.hint_env().evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-echo",
        results_path=str(tmp_path / "evals" / "hints"),
        progress=False,
    )
    assert [r["error"] is None for r in out.rows] == [True, False]
    lines, first = inspect.getsourcelines(author_env.HintEnv.env_response)
    bug = first + next(i for i, line in enumerate(lines) if "the bug" in line)
    with ViewerProcess(str(tmp_path)) as viewer:
        run = viewer.url + "#/runs/" + urllib.parse.quote("evals~hints")
        page.goto(run + "/rows/1/0")
        page.wait_for_selector("#row-error pre.traceback")
        shown = page.inner_text("#row-error pre.traceback")
        assert f'File "{author_env.__file__}", line {bug}, in env_response' in shown
        assert 'state["hints"][0]' in shown and shown.rstrip().endswith("KeyError: 'hints'")
        assert "of the library folded]" in shown
        assert page.locator("#row-error pre.traceback").is_visible()
        page.screenshot(path=str(artifacts_dir / "viewer-traceback.png"), full_page=True)

        page.goto(run + "/rows/0/0")
        page.wait_for_selector("#transcript .explanation")
        assert page.inner_text("#transcript .explanation") == "looked for '1' in the last reply"
    assert not page.errors
