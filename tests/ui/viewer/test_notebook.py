"""``out.view()`` / ``vf.view()`` in a real Jupyter kernel: a static snapshot of the run, and an
iframe onto a loopback viewer kept for the kernel's life that a browser adds inline only while
that server answers (a saved notebook keeps no frame onto a dead URL); in-process, outputs not on
disk."""

from __future__ import annotations

import json
import re
import shutil
import urllib.request

import pytest

import verifiers_lite as vf
from tests.ui.viewer.helpers import stats_by_hand

pytestmark = pytest.mark.slow


def fetch(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=60) as resp:
        return json.loads(resp.read())


def test_view_of_outputs_in_process(runs):
    out = runs["outputs"]["calc"]
    in_memory = vf.GenerateOutputs(rows=list(out.rows), metadata=dict(out.metadata))  # never saved
    frame = vf.view(in_memory)
    base, fragment = frame.url.split("#", 1)
    run_id = urllib.request.unquote(fragment.removeprefix("/runs/"))
    detail = fetch(f"{base}api/runs/{urllib.request.quote(run_id, safe='')}")
    assert detail["stats"]["num_rollouts"] == len(out.rows)
    assert detail["stats"]["reward_mean"] == pytest.approx(stats_by_hand(out.rows)["mean"])
    html = frame._repr_html_()
    assert "<iframe" not in html  # only a live page adds one, once the server answers
    snapshot = re.sub(r"<[^>]+>", "", html.split("<script>")[0])
    assert f"mean reward {stats_by_hand(out.rows)['mean']:.3f}" in snapshot
    assert f"{len(out.rows)} rollouts" in snapshot and frame.url in html
    again = out.view()  # the same server for the process's life, another run added to it
    assert again.url.split("#")[0] == base
    assert {r["run_id"] for r in fetch(base + "api/runs")["runs"]} >= {run_id}


def test_view_in_a_kernel_renders_inline(runs, tmp_path, artifacts_dir):
    jupyter_client = pytest.importorskip("jupyter_client")
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:

        def run(code: str) -> str:
            msg_id = kc.execute(code)
            html = ""
            while True:
                msg = kc.get_iopub_msg(timeout=120)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                if msg["msg_type"] == "error":
                    raise AssertionError("\n".join(msg["content"]["traceback"]))
                if msg["msg_type"] in ("execute_result", "display_data"):
                    html += msg["content"]["data"].get("text/html", "")
                if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                    return html

        run_dir = runs["root"] / "evals" / "arith-a"
        html = run(
            f"import verifiers_lite as vf\nout = vf.load_results({str(run_dir)!r})\nout.view()"
        )
        url = re.search(r'<a href="([^"]+)"', html).group(1)
        assert url.startswith("http://127.0.0.1:") and "#/runs/" in url
        html2 = run(f"vf.view({str(runs['root'])!r})")
        assert re.search(r'<a href="([^"]+)"', html2).group(1).split("#")[0] == url.split("#")[0]
        listed = fetch(url.split("#")[0] + "api/runs")["runs"]
        assert len(listed) == 1 + len(runs["outputs"])  # the run, then the folder's runs as well

        chromium = shutil.which("chromium")
        sync_api = pytest.importorskip("playwright.sync_api")
        if chromium is None:
            pytest.skip("chromium not installed")
        page_file = tmp_path / "cell.html"
        page_file.write_text(
            f"<!doctype html><html><body><h3>notebook cell output</h3>{html}</body></html>"
        )
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
            )
            pg = browser.new_page(viewport={"width": 1200, "height": 900})
            pg.goto(page_file.as_uri())
            frame = pg.frame_locator("iframe").first
            mean = frame.locator("#reward-mean")
            mean.wait_for(timeout=30_000)
            rewards = [r["reward"] for r in runs["outputs"]["arith-a"].rows]
            assert f"{sum(rewards) / len(rewards):.3f}" in mean.inner_text()
            pg.screenshot(path=str(artifacts_dir / "viewer-notebook-iframe.png"))
            kc.stop_channels()
            km.shutdown_kernel(now=True)  # the viewer goes with the kernel
            pg.goto(page_file.as_uri())  # the same outputs, read later
            pg.wait_for_selector(".vf-view[data-live='0']", state="attached")
            assert pg.locator("iframe").count() == 0
            assert f"{sum(rewards) / len(rewards):.3f}" in pg.inner_text(".vf-view-snapshot")
            pg.screenshot(path=str(artifacts_dir / "viewer-notebook-after-kernel.png"))
            browser.close()
    finally:
        kc.stop_channels()
        if km.is_alive():
            km.shutdown_kernel(now=True)
