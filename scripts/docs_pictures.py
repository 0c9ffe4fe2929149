"""Pictures for the docs site, made by the build from real runs (never drawn by hand).

A small ``arithmetic`` run and a tool-using run against the fake model server on 127.0.0.1; the
reward plot and pass@k drawn from the first by the library's own plot functions, and the second's
transcript timeline shot from ``vf-lite view`` in Debian's headless Chromium (Playwright with
``executable_path``: no browser download). The pictures are made once per build process.
"""

from __future__ import annotations

import asyncio
import io
import re
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

PICTURES = ("reward-plot.png", "pass-at-k.png", "transcript-timeline.png")


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


def _timeline(client: object, tmp: Path) -> bytes:
    import verifiers_lite as vf

    env = vf.ToolEnv(
        tools=[calculator],
        dataset=[{"question": "What is 17 + 25?", "answer": "42"}],
        system_prompt="Use the calculator for any sum.",
        env_id="calculator-demo",
    )
    env.evaluate_sync(client, "fake-tool", results_path=str(tmp / "timeline"), progress=False)
    viewer = subprocess.Popen(
        [sys.executable, "-m", "verifiers_lite.cli", "view", str(tmp), "--port", "0"]
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
        return _shoot(url, "#/runs/timeline/rows/0/0")
    finally:
        viewer.terminate()
        viewer.wait(timeout=20)


def _shoot(url: str, route: str) -> bytes:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not url or chromium is None:
        raise RuntimeError(f"docs pictures: viewer URL {url!r}, chromium {chromium!r}")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 800})
        base, _, query = url.partition("?")
        page.goto(f"{base}{'?' + query if query else ''}{route}")
        page.wait_for_selector("#timeline")
        page.click("#timeline .tl-call >> nth=1 >> summary")
        shot = page.locator("#timeline").screenshot()
        browser.close()
    return shot


@cache
def pictures() -> dict[str, bytes]:
    """name -> PNG bytes of every picture (made on first use)."""
    import verifiers_lite as vf
    from verifiers_lite.testing.fake_server import FakeServerProcess

    with FakeServerProcess() as server, tempfile.TemporaryDirectory() as tmp:
        server.configure(latency_ms=40)
        client = vf.ChatClient(server.base_url)
        found = _plots(client, Path(tmp))
        found["transcript-timeline.png"] = _timeline(client, Path(tmp))
    return found
