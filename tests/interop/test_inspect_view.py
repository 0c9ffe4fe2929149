"""``inspect view`` (inspect_ai's own viewer) opens an exported run: the sample list, one
transcript with its reasoning and tool call, its scores. Screenshots go to $VF_TEST_ARTIFACTS
(default tests/interop/artifacts/) as inspect-view-*.png."""

from __future__ import annotations

import os
import re
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

import verifiers_lite as vf
from tests.helpers.browser import TIMEOUT_MS, launch_chromium
from tests.interop.helpers import EXAMPLES, ROLLOUTS, thinking_run
from tests.interop.inspect_runner import inspect_python
from verifiers_lite.testing.fake_server import free_port


@pytest.fixture
def browser() -> Iterator[object]:
    yield from launch_chromium()


@pytest.fixture
def inspect_view(fake_server, tmp_path: Path) -> Iterator[tuple[str, vf.GenerateOutputs]]:
    run = thinking_run(fake_server, tmp_path / "run")
    vf.export_inspect(run, tmp_path / "logs")
    port = free_port()
    proc = subprocess.Popen(
        [
            inspect_python(),
            "-m",
            "inspect_ai",
            "view",
            "--log-dir",
            str(tmp_path / "logs"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url + "api/logs", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("inspect view did not start")
                time.sleep(0.2)
        yield url, run
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _artifacts() -> Path:
    base = Path(os.environ.get("VF_TEST_ARTIFACTS") or Path(__file__).parent / "artifacts")
    base.mkdir(parents=True, exist_ok=True)
    return base


def test_inspect_view_shows_the_samples_a_transcript_and_its_scores(inspect_view, browser) -> None:
    url, run = inspect_view
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url)
    page.get_by_text(f"{EXAMPLES * ROLLOUTS} Samples", exact=True).wait_for()
    body = page.inner_text("body")
    assert "fake-think" in body and "calculator" in body
    clean = [
        r
        for r in run.rows
        if not any(o["error"] for o in run.rows if o["example_id"] == r["example_id"])
    ][0]
    question = clean["prompt"][-1]["content"].split("What is ")[-1]
    assert question in body
    page.screenshot(path=str(_artifacts() / "inspect-view-samples.png"))
    page.get_by_text(question).first.click()
    page.get_by_text("expression:").first.wait_for()  # the tool call, with its arguments
    transcript = page.inner_text("body")
    assert clean["completion"][0]["reasoning_content"] in transcript
    assert clean["completion"][-1]["content"] in transcript
    page.screenshot(path=str(_artifacts() / "inspect-view-transcript.png"), full_page=True)
    page.get_by_text(re.compile("^scoring$", re.IGNORECASE)).first.click()
    page.get_by_text("used_calculator").first.wait_for()
    page.screenshot(path=str(_artifacts() / "inspect-view-scores.png"), full_page=True)
