"""A transcript's timeline in Debian's headless Chromium: one line per model call, tool call and
environment turn, bars drawn to scale on the rollout's time axis, each call expandable to the
request the fake server received and the answer it gave. Screenshot: viewer-timeline.png in
$VF_TEST_ARTIFACTS (default tests/ui/viewer/artifacts/)."""

from __future__ import annotations

import asyncio
import inspect
import json

import pytest

import verifiers_lite as vf
from tests.helpers.browser import CHROMIUM, NO_CHROMIUM, NO_PLAYWRIGHT
from tests.helpers.envs import boxed_correct
from tests.ui.viewer.helpers import run_id
from tests.ui.viewer.viewer_proc import ViewerProcess
from verifiers_lite.core.trajectory import model_calls
from verifiers_lite.results.store import read_rows

pytestmark = pytest.mark.slow
sync_api = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT)
if CHROMIUM is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)

TOOL_S = 0.25  # the tool takes longer than a model call (40 ms): its bar must be wider


async def calculator(expression: str) -> str:
    """Evaluate an integer sum.

    Args:
        expression: e.g. "3 + 4".
    """
    await asyncio.sleep(TOOL_S)
    a, b = expression.split(" + ")
    return str(int(a) + int(b))


@pytest.fixture
def timeline_run(fake_server, tmp_path):
    fake_server.configure(latency_ms=40)
    env = vf.ToolEnv(
        tools=[calculator],
        dataset=[{"question": "What is 17 + 25?", "answer": "42"}],
        rubric=vf.Rubric([boxed_correct]),
        system_prompt="Use the calculator for any sum.",
    )
    env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-tool",
        sampling_args={"temperature": 0.2},
        results_path=str(tmp_path / "evals" / "timeline"),
        progress=False,
    )
    (row,) = read_rows(tmp_path / "evals" / "timeline" / "results.jsonl")
    with ViewerProcess(str(tmp_path)) as viewer:
        yield viewer, row, fake_server.requests()


def _box(pg, selector: str) -> dict[str, float]:
    return pg.locator(selector).bounding_box()


def test_timeline_shows_each_call_to_scale(timeline_run, page, artifacts_dir):
    viewer, row, received = timeline_run
    pg = page
    pg.goto(viewer.url + f"#/runs/{run_id('timeline')}/rows/0/0")
    pg.wait_for_selector("#timeline")
    assert pg.locator("#timeline .tl-call").count() == 2 == len(received)
    assert pg.locator("#timeline .tl-tool").count() == 1
    assert pg.locator("#timeline .tl-env").count() == 1

    # durations to scale: each bar's share of the track is its share of the rollout's time
    calls = model_calls(row)
    tool = calls[0]["tool_calls"][0]
    track = _box(pg, "#timeline .tl-call >> nth=0 >> .tl-track")["width"]
    first = _box(pg, "#timeline .tl-call >> nth=0 >> .tl-bar.model")
    bar = _box(pg, "#timeline .tl-tool .tl-bar.tool")
    total = max(row["timing"]["rollout_ms"], tool["start_ms"] + tool["duration_ms"])
    assert bar["width"] / track == pytest.approx(tool["duration_ms"] / total, abs=0.01)
    assert bar["width"] / track >= TOOL_S * 1000 / total - 0.01  # the sleep, measured apart
    assert bar["width"] > 2 * first["width"]  # 250 ms of tool against a 40 ms call
    assert bar["x"] >= first["x"] + first["width"] - 1  # the tool ran after the call answered
    second = _box(pg, "#timeline .tl-call >> nth=1 >> .tl-bar.model")
    assert second["x"] >= bar["x"] + bar["width"] - 1

    # expand the second call: the request as the server received it, the answer as given
    pg.click("#timeline .tl-call >> nth=1 >> summary")
    detail = pg.locator("#timeline .tl-call >> nth=1 >> .tl-detail")
    shown_args = json.loads(detail.locator(".sampling-args").inner_text())
    assert shown_args["temperature"] == 0.2  # the run's, and the rollout's seed beside it
    assert {k: received[1][k] for k in shown_args} == shown_args  # what the server got
    detail.locator(".tl-kept summary").click()
    shown = detail.locator(".msg > .content").all_inner_texts()
    sent = received[1]["messages"]
    expected = [m["content"] for m in sent if m.get("content")]
    answer = calls[1]["message"]["content"]
    assert shown == [*expected, answer]
    assert "42" in detail.locator(".request-new").inner_text()  # the tool's reply, new here
    assert "\\boxed{42}" in detail.locator(".response").inner_text()

    # expand the tool call: its arguments and result
    pg.click("#timeline .tl-tool summary")
    assert json.loads(pg.inner_text("#timeline .tl-tool .tool-args")) == {"expression": "17 + 25"}
    assert pg.inner_text("#timeline .tl-tool .tool-result") == "42"
    assert pg.errors == []
    pg.locator("#timeline").screenshot(path=str(artifacts_dir / "viewer-timeline.png"))
    pg.screenshot(path=str(artifacts_dir / "viewer-transcript-timeline.png"), full_page=True)


def broken_calculator(expression: str) -> str:
    """Evaluate an integer sum (the author's bug: it only knows one).

    Args:
        expression: e.g. "3 + 4".
    """
    return {"1 + 1": "2"}[expression]


def test_a_tool_that_raised_shows_where_in_its_detail(fake_server, tmp_path, page, artifacts_dir):
    broken_calculator.__name__ = "calculator"  # the name the fake model calls
    env = vf.ToolEnv(
        tools=[broken_calculator], dataset=[{"question": "What is 17 + 25?", "answer": "42"}]
    )
    env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-tool",
        results_path=str(tmp_path / "evals" / "broken"),
        progress=False,
    )
    lines, first = inspect.getsourcelines(broken_calculator)
    line = first + next(i for i, text in enumerate(lines) if "return {" in text)
    with ViewerProcess(str(tmp_path)) as viewer:
        page.goto(viewer.url + f"#/runs/{run_id('broken')}/rows/0/0")
        page.wait_for_selector("#timeline")
        summary = page.inner_text("#timeline .tl-tool summary")
        assert "calculator" in summary and "exception" in summary
        page.click("#timeline .tl-tool summary")
        shown = page.inner_text("#timeline .tl-tool .tl-detail pre.traceback")
        assert f'File "{__file__}", line {line}, in broken_calculator' in shown
        assert shown.rstrip().endswith("KeyError: '17 + 25'")
        assert "error-text" in page.inner_html("#timeline .tl-tool .tl-detail")
        assert page.errors == []
        page.locator("#timeline").screenshot(path=str(artifacts_dir / "viewer-tool-traceback.png"))
