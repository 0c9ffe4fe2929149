"""The viewer in Debian's headless Chromium, driven by Playwright (no browser download): runs
page, a run, errors filter, a transcript with a tool call, two runs compared, a run followed
live, markup in a completion kept as text, and the self-contained HTML export offline.
Screenshots go to $VF_TEST_ARTIFACTS (default tests/ui/viewer/artifacts/)."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import pytest

from tests.helpers.browser import CHROMIUM, NO_CHROMIUM, NO_PLAYWRIGHT
from tests.ui.viewer.helpers import XSS, make_row, run_id
from tests.ui.viewer.viewer_proc import ViewerProcess
from verifiers_lite.results.store import ResultsStore

pytestmark = pytest.mark.slow
sync_api = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT)
if CHROMIUM is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)


def shot(pg, artifacts_dir: Path, name: str) -> None:
    pg.screenshot(path=str(artifacts_dir / f"viewer-{name}.png"), full_page=True)


def test_walkthrough(viewer, runs, page, artifacts_dir):
    pg = page
    pg.goto(viewer.url)
    pg.wait_for_selector("table#runs tbody tr")
    assert pg.locator("table#runs tbody tr").count() == 5
    shot(pg, artifacts_dir, "runs")

    # a run with errors: its page, then the rollouts filtered to errors
    pg.click(f"a[href='#/runs/{urllib.parse.quote(run_id('errored'))}']")
    pg.wait_for_selector("#reward-mean")
    rows = runs["outputs"]["errored"].rows
    scored = [r["reward"] for r in rows if r["reward"] is not None]
    assert f"{sum(scored) / len(scored):.3f}" in pg.inner_text("#reward-mean")
    assert "model_http_error" in pg.inner_text("main")
    shot(pg, artifacts_dir, "run")
    pg.click("text=errored rollouts")
    pg.wait_for_selector("table#rows tbody tr")
    assert pg.locator("table#rows tbody tr").count() == 3
    assert pg.locator("table#rows tbody .badge.err").count() == 3
    assert pg.input_value("select[name=error]") == "any"
    shot(pg, artifacts_dir, "rollouts-errors")
    # the same filter from the form: reset, pick the category, apply
    pg.click("text=Reset")
    pg.wait_for_function(f"document.querySelectorAll('table#rows tbody tr').length === {len(rows)}")
    pg.select_option("select[name=error]", "model_http_error")
    pg.click("button[type=submit]")
    pg.wait_for_function("document.querySelectorAll('table#rows tbody tr').length === 3")
    pg.click("table#rows tbody tr >> nth=0")
    pg.wait_for_selector("#row-error")
    assert "bad <b>args</b>" in pg.inner_text("#row-error")  # shown as text, markup and all

    # a transcript with a tool call, reached from the rollouts table
    pg.goto(viewer.url + f"#/runs/{urllib.parse.quote(run_id('calc'))}/rollouts")
    pg.wait_for_selector("table#rows tbody tr")
    pg.click("table#rows tbody tr >> nth=0")
    pg.wait_for_selector("#conversation .tool-call")
    text = pg.inner_text("#transcript")
    first = runs["disk"]["calc"][0]
    call = first["completion"][0]["tool_calls"][0]
    assert "tool call · calculator" in text and "TOOL RESULT · CALCULATOR" in text.upper()
    assert first["completion"][1]["content"] in pg.inner_text("#conversation .msg.tool")
    assert call["id"] in text
    shot(pg, artifacts_dir, "transcript-tool-call")

    # compare two runs of one environment, then one example across them
    pg.goto(viewer.url)
    pg.wait_for_selector("table#runs tbody tr")
    for name in ("arith-a", "arith-b"):
        pg.check(f"tr[data-run='{run_id(name)}'] input[type=checkbox]")
    pg.click("#compare-selected")
    pg.wait_for_selector("table#compare-examples tr.clickable")
    assert pg.locator("table#compare-examples tr.clickable").count() == 12
    # the paired figures, labelled by what differs (the model); the difference computed here
    means = [{}, {}]
    for m, name in zip(means, ("arith-a", "arith-b"), strict=True):
        for r in runs["outputs"][name].rows:
            m.setdefault(r["example_id"], []).append(r["reward"])
    diffs = [
        sum(means[1][k]) / len(means[1][k]) - sum(means[0][k]) / len(means[0][k]) for k in means[0]
    ]
    paired = pg.inner_text("table#compare-paired")
    assert "fake-echo − fake-arith" in paired and "shared examples\t12" in paired.replace(
        "  ", "\t"
    ), paired
    mean = sum(diffs) / len(diffs)
    assert ("+" if mean > 0 else "") + f"{mean:.3f}" in paired, paired
    wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    assert f"{wins} / {len(diffs) - wins - losses} / {losses}" in paired
    assert [pg.inner_text(f"table#compare-runs tr >> nth={i} >> td >> nth=1") for i in (1, 2)] == [
        "fake-arith",
        "fake-echo",
    ]
    shot(pg, artifacts_dir, "compare-paired")
    pg.click("table#compare-examples tr.clickable >> nth=0")
    pg.wait_for_selector("#compare-example")
    pg.wait_for_function("document.querySelectorAll('.compare-col').length === 2")
    assert pg.locator(".compare-col").nth(0).locator(".compare-rollout").count() == 3
    shot(pg, artifacts_dir, "compare")
    assert pg.errors == []  # type: ignore[attr-defined]
    assert all(u.startswith(viewer.base) for u in pg.requests), (
        "the page reached outside the viewer"
    )  # type: ignore[attr-defined]


def test_markup_in_a_completion_is_text(viewer, runs, page, artifacts_dir):
    pg = page
    pg.goto(viewer.url + f"#/runs/{urllib.parse.quote(run_id('xss'))}/rows/0/0")
    pg.wait_for_selector("#conversation .msg.assistant")
    assert XSS in pg.inner_text(
        "#conversation .msg.assistant .content"
    )  # the echoed prompt, verbatim
    assert pg.locator("#transcript script, #transcript img").count() == 0
    assert pg.evaluate("window.__pwned") is None
    pg.goto(viewer.url + f"#/runs/{urllib.parse.quote(run_id('xss'))}/rollouts")
    pg.wait_for_selector("table#rows tbody tr")
    assert "<script>" in pg.inner_text("table#rows")
    assert pg.locator("table#rows img, table#rows script").count() == 0
    assert pg.evaluate("window.__pwned") is None
    shot(pg, artifacts_dir, "markup-as-text")


def test_run_followed_live_without_reload(tmp_path, page, artifacts_dir):
    store = ResultsStore(tmp_path / "live")
    store.open({"env_id": "live-env", "model": "m", "num_rollouts": 6})
    store.append_group([make_row(0, 0, 1.0), make_row(0, 1, 0.0)])
    with ViewerProcess(str(tmp_path)) as v:
        pg = page
        pg.goto(v.url + "#/runs/live/rollouts")
        pg.wait_for_function("document.querySelectorAll('table#rows tbody tr').length === 2")
        pg.evaluate("window.__same_page = true")
        assert "following live" in pg.inner_text("#live")
        store.append_group([make_row(1, 0, 1.0), make_row(1, 1, 1.0)])
        pg.wait_for_function("document.querySelectorAll('table#rows tbody tr').length === 4")
        store.append_group([make_row(2, 0, 0.5), make_row(2, 1, 0.5)])
        store.write_metadata(
            {"env_id": "live-env", "model": "m", "num_rollouts": 6, "status": "completed"}
        )
        pg.wait_for_function("document.querySelectorAll('table#rows tbody tr').length === 6")
        pg.wait_for_function(
            "document.getElementById('live').textContent === ''"
        )  # stops when done
        assert pg.evaluate("window.__same_page") is True  # no reload happened
        shot(pg, artifacts_dir, "live")
    store.close()


def test_self_contained_html_export(runs, page, artifacts_dir, tmp_path):
    out = runs["outputs"]["calc"]
    path = out.to_html(tmp_path / "calc.html")
    html = path.read_text()
    head, rest = html.split('<script id="vf-data" type="application/json">')
    code = head + rest.split("</script>", 1)[1]  # the page without its data block
    assert "static/app" not in code and "http://" not in code and "https://" not in code
    pg = page
    pg.goto(path.as_uri())
    pg.wait_for_selector("#reward-mean")
    assert "1.000" in pg.inner_text("#reward-mean")
    pg.click("text=Rollouts (6)")
    pg.wait_for_selector("table#rows tbody tr")
    assert pg.locator("table#rows tbody tr").count() == len(out.rows)
    pg.click("table#rows tbody tr >> nth=0")
    pg.wait_for_selector("#conversation .tool-call")
    assert all(u.startswith("file://") for u in pg.requests)  # type: ignore[attr-defined]
    shot(pg, artifacts_dir, "export")
    xss = runs["outputs"]["xss"].to_html(tmp_path / "xss.html")
    assert "<script>window.__pwned" not in xss.read_text()  # escaped inside the data block
    pg.goto(xss.as_uri())
    pg.wait_for_selector("#reward-mean")
    pg.click("text=Rollouts (2)")
    pg.click("table#rows tbody tr >> nth=0")
    pg.wait_for_selector("#conversation .msg.assistant")
    assert XSS in pg.inner_text("#conversation .msg.assistant .content")
    assert pg.evaluate("window.__pwned") is None
    assert pg.errors == []  # type: ignore[attr-defined]
