"""Pictures for the docs site, made by the build from real runs (never drawn by hand).

A small ``arithmetic`` run and a tool-using run against the fake model server on 127.0.0.1; the
reward plot and pass@k drawn from the first by the library's own plot functions, the second's
transcript timeline and the compare page of two more runs (greedy against sampled) shot from
``vf-lite view``, and the live progress widget shot mid-run in JupyterLab (a notebook cell that
runs an evaluation in the library's kernel), all in Debian's headless Chromium (Playwright with
``executable_path``: no browser download). The pictures are made once per build process.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

PICTURES = (
    "reward-plot.png",
    "pass-at-k.png",
    "transcript-timeline.png",
    "compare-page.png",
    "live-widget.png",
)


async def calculator(expression: str) -> str:
    """Evaluate an integer sum.

    Args:
        expression: e.g. "3 + 4".
    """
    await asyncio.sleep(0.2)  # a tool that takes a while, so the timeline has something to show
    a, b = expression.split(" + ")
    return str(int(a) + int(b))


def _plots(client: object, tmp: Path) -> dict[str, bytes]:
    import matplotlib

    matplotlib.use("Agg")
    import verifiers_lite as vf

    env = vf.load_environment("arithmetic", num_examples=12)
    out = env.evaluate_sync(client, "fake-arith", rollouts_per_example=4, progress=False)
    found = {}
    for name, draw in (("reward-plot.png", vf.plot_rewards), ("pass-at-k.png", vf.plot_pass_at_k)):
        ax = draw(out)
        buf = io.BytesIO()
        ax.figure.set_size_inches(6, 3.6)
        ax.figure.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        found[name] = buf.getvalue()
    return found


def _viewer_pictures(client: object, tmp: Path) -> dict[str, bytes]:
    """A tool run's transcript timeline and the compare page of a greedy and a sampled run,
    shot from ``vf-lite view`` over their folder."""
    import verifiers_lite as vf

    runs = tmp / "runs"
    env = vf.ToolEnv(
        tools=[calculator],
        dataset=[{"question": "What is 17 + 25?", "answer": "42"}],
        system_prompt="Use the calculator for any sum.",
        env_id="calculator-demo",
    )
    env.evaluate_sync(client, "fake-tool", results_path=str(runs / "timeline"), progress=False)
    arithmetic = vf.load_environment("arithmetic", num_examples=8)
    for name, temperature in (("greedy", 0.0), ("sampled", 1.0)):
        arithmetic.evaluate_sync(
            client,
            "fake-arith",
            rollouts_per_example=3,
            sampling_args={"temperature": temperature},
            results_path=str(runs / name),
            progress=False,
        )
    viewer = subprocess.Popen(
        [sys.executable, "-m", "verifiers_lite.cli", "view", str(runs), "--port", "0"]
        + ["--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = ""
        for line in viewer.stdout or []:
            found = re.search(r"http://127\.0\.0\.1:\d+/\S*", line)
            if found:
                url = found.group(0)
                break
        base, _, query = url.partition("?")
        with _browser() as browser:
            page = browser.new_page(viewport={"width": 1100, "height": 800})
            page.goto(f"{base}{'?' + query if query else ''}#/runs/timeline/rows/0/0")
            page.wait_for_selector("#timeline")
            page.click("#timeline .tl-call >> nth=1 >> summary")
            timeline = page.locator("#timeline").screenshot()
            page.goto(f"{base}{'?' + query if query else ''}#/compare?runs=greedy&runs=sampled")
            page.wait_for_selector("#compare-examples")
            compare = page.locator("#app").screenshot()
        return {"transcript-timeline.png": timeline, "compare-page.png": compare}
    finally:
        viewer.terminate()
        viewer.wait(timeout=20)


@contextlib.contextmanager
def _browser() -> Iterator[Any]:
    """Debian's headless Chromium, driven by Playwright."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise RuntimeError("docs pictures: no chromium on PATH (.ci/install_chromium.sh)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


WIDGET_ROLLOUTS = 40  # 10 examples x 4, four at a time: long enough to be shot mid-run

WIDGET_CELL = """import verifiers_lite as vf

env = vf.load_environment("arithmetic", num_examples=10)
client = vf.ChatClient("{base_url}")
out = env.evaluate_sync(
    client, "fake-arith", rollouts_per_example=4, max_concurrent=4
)"""


def _widget(base_url: str, tmp: Path) -> bytes:
    """The live progress widget mid-run: JupyterLab on 127.0.0.1 runs a notebook cell that
    evaluates against the fake server; the cell is shot once some rollouts have ended and
    others are still running."""
    from verifiers_lite.testing.fake_server import free_port

    lab = tmp / "lab"
    lab.mkdir()
    cell = WIDGET_CELL.format(base_url=base_url)
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": []}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    notebook["cells"][0]["source"] = cell
    (lab / "live.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    port, token = free_port(), "docs-pictures"
    # Settings, workspaces and runtime files of this server only: nothing of the user's.
    env = {**os.environ, **{k: str(tmp / k.lower()) for k in _JUPYTER_DIRS}}
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}"]
        + ["--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}", "--allow-root"]
        + [f"--ServerApp.root_dir={lab}", "--LabApp.news_url=None"]
        + ["--LabApp.extension_manager=readonly"],  # no package index asked
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        for line in server.stdout or []:
            if f"127.0.0.1:{port}/lab" in line:
                break
        # Keep reading its log so the server never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in server.stdout or []], daemon=True).start()
        with _browser() as browser:
            page = browser.new_page(viewport={"width": 1000, "height": 700})
            page.goto(f"http://127.0.0.1:{port}/lab/tree/live.ipynb?token={token}")
            page.locator(".jp-Notebook .jp-Cell .cm-content").first.click()
            page.keyboard.press("Shift+Enter")
            total = WIDGET_ROLLOUTS
            page.wait_for_function(
                r"""total => {
                    const text = document.querySelector(".jp-Cell-outputArea")?.innerText || "";
                    const m = text.match(/(\d+)\/(\d+)/);
                    return m && +m[2] === total && +m[1] >= total / 4 && +m[1] <= total * 3 / 4;
                }""",
                arg=total,
                timeout=120_000,
            )
            return page.locator(".jp-Notebook .jp-Cell").first.screenshot()
    finally:
        server.terminate()
        server.wait(timeout=30)


_JUPYTER_DIRS = (
    "JUPYTER_CONFIG_DIR",
    "JUPYTER_RUNTIME_DIR",
    "JUPYTERLAB_SETTINGS_DIR",
    "JUPYTERLAB_WORKSPACES_DIR",
)


@cache
def pictures() -> dict[str, bytes]:
    """name -> PNG bytes of every picture (made on first use)."""
    import verifiers_lite as vf
    from verifiers_lite.testing.fake_server import FakeServerProcess

    with FakeServerProcess() as server, tempfile.TemporaryDirectory() as tmp:
        server.configure(latency_ms=40)
        client = vf.ChatClient(server.base_url)
        found = _plots(client, Path(tmp))
        found.update(_viewer_pictures(client, Path(tmp)))
        server.configure(latency_ms=400)  # a run that lasts while its widget is shot
        found["live-widget.png"] = _widget(server.base_url, Path(tmp))
    return found
