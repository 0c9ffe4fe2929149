"""The executed quickstart, a results table, the live widget's parts and its final frame, the
plots and a committed notebook, rendered to HTML and opened in headless Chromium.

Needs Debian's chromium (``.ci/install_chromium.sh``); skipped, with that hint, without it.
Widgets need a CDN-loaded manager and stay empty offline; the progress display's static final
frame, the plots and the results tables must all show. With ``VF_TEST_ARTIFACTS`` set
(``scripts/test.sh`` sets it) every screenshot is kept there for a person to look at.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import verifiers_lite as vf
from tests.helpers.browser import CHROMIUM, NO_CHROMIUM
from tests.helpers.sample_rows import tool_rows

pytestmark = pytest.mark.slow

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
]
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)


def screenshot(html_file: Path, png: Path, size: str = "1280,1600") -> Path:
    """Open ``html_file`` in a fresh headless Chromium profile and save a screenshot."""
    with tempfile.TemporaryDirectory(prefix="vf-chromium-") as profile:
        proc = subprocess.run(
            [
                CHROMIUM,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--screenshot={png}",
                f"--window-size={size}",
                html_file.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert png.exists(), f"no screenshot (rc={proc.returncode}): {proc.stderr[-2000:]}"
    artifacts = os.environ.get("VF_TEST_ARTIFACTS")
    if artifacts:  # keep the pictures for a person to look at
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shutil.copy(png, Path(artifacts) / png.name)
    return png


def pixels(png: Path):
    from PIL import Image

    return Image.open(png).convert("RGB")


def assert_not_blank(png: Path) -> None:
    from PIL import ImageStat

    img = pixels(png)
    stddev = ImageStat.Stat(img.convert("L")).stddev[0]
    dark = sum(img.convert("L").point(lambda v: 255 if v < 128 else 0).histogram()[255:])
    assert stddev > 8 and dark > 2000, (
        f"{png.name} looks blank (stddev={stddev:.1f}, dark pixels={dark})"
    )


def count_near(png: Path, rgb: tuple[int, int, int], tol: int = 24) -> int:
    """Pixels within ``tol`` of ``rgb`` on every channel."""
    import numpy as np

    arr = np.asarray(pixels(png), dtype=np.int16)
    return int((np.abs(arr - np.array(rgb, dtype=np.int16)) <= tol).all(axis=-1).sum())


@needs_chromium
def test_executed_quickstart_renders_in_chromium(executed_quickstart, tmp_path):
    from nbconvert import HTMLExporter

    nb, _ = executed_quickstart
    body, _ = HTMLExporter().from_notebook_node(nb)
    page = tmp_path / "quickstart.html"
    page.write_text(body, encoding="utf-8")
    png = screenshot(page, tmp_path / "quickstart.png", size="1280,5200")
    assert_not_blank(png)
    assert count_near(png, (0x1F, 0x77, 0xB4)) > 2000, "no matplotlib bars visible"
    assert count_near(png, (0x4C, 0xAF, 0x50), tol=12) > 300, "no green final progress bar visible"


@needs_chromium
def test_results_repr_html_renders_in_chromium(tmp_path):
    out = vf.GenerateOutputs(
        rows=tool_rows(), metadata={"env_id": "calc", "model": "m", "rollouts_per_example": 2}
    )
    page = tmp_path / "results.html"
    page.write_text(
        f"<!doctype html><meta charset='utf-8'><body>{out._repr_html_()}</body>", encoding="utf-8"
    )
    png = screenshot(page, tmp_path / "results.png", size="1100,700")
    assert_not_blank(png)
    assert count_near(png, (0xC6, 0x28, 0x28), tol=40) > 50, "error category not shown in red"


def _stats_mid_run():
    """A run 7 rollouts into 12: 4 scored (one cut at max_tokens), 3 ended awaiting their group, 2 running."""
    from verifiers_lite.core.progress import RunStats

    stats = RunStats(total=12)
    stats.started -= 2.0  # two seconds into the run
    rows = [
        {"example_id": 0, "rollout_index": i, "reward": r, "stop_reason": s}
        for i, (r, s) in enumerate([(1.0, "stop"), (0.0, "length"), (1.0, "stop"), (0.2, "stop")])
    ]
    stats.add(rows)
    for i in range(3):
        stats.rollout_started()
        stats.rollout_ended((1, i))
    stats.rollout_started()
    stats.rollout_started()
    return stats


@needs_chromium
def test_live_widget_and_final_frame_render_in_chromium(tmp_path):
    """The widget's own HTML parts mid-run (counts, in flight, stop reasons, histogram) and the
    static final frame with the max_tokens warning, as a reader sees them."""
    from verifiers_lite.ui.notebook.display import NotebookProgress
    from verifiers_lite.ui.notebook.summary_html import final_frame_html

    stats = _stats_mid_run()
    live = NotebookProgress("rollouts", show=False)
    live.on_start(stats)
    live._render(stats)
    pct = 100 * live.bar.value / live.bar.max
    bar = (
        f'<div style="display:flex;gap:8px;align-items:center;font-family:sans-serif"><b>rollouts</b>'
        f'<div style="width:45%;height:14px;background:#eee"><div style="width:{pct:.0f}%;height:100%;'
        f'background:#2196f3"></div></div>{live.count.value}</div>'
    )
    ended = _stats_mid_run()  # the same run at its end, the rest cut at max_tokens
    ended.add(
        [
            {
                "example_id": 1 + i // 4,
                "rollout_index": i % 4,
                "reward": 1.0,
                "stop_reason": "length",
            }
            for i in range(8)
        ]
    )
    ended.in_flight = 0
    ended.started -= 2.0
    final = final_frame_html("rollouts", ended, "success")
    page = tmp_path / "widget.html"
    page.write_text(
        "<!doctype html><meta charset='utf-8'><body style='margin:16px'>"
        f"<h3>live</h3>{bar}{live.figures.value}{live.stops.value}{live.hist.value}"
        f"<h3>final frame</h3>{final}</body>",
        encoding="utf-8",
    )
    assert live.count.value == "7/12" and "2 running" in live.figures.value
    assert "stop reasons: stop 3, length 1" in live.stops.value
    assert "max_tokens" in final and "length 9" in final and "9 of 12 rollouts (75%)" in final
    png = screenshot(page, tmp_path / "widget.png", size="1000,520")
    assert_not_blank(png)
    assert count_near(png, (0x21, 0x96, 0xF3), tol=12) > 300, "no blue live progress bar visible"
    assert count_near(png, (0xB2, 0x6A, 0x00), tol=30) > 30, "max_tokens warning not shown"


@needs_chromium
def test_plots_render_in_chromium(tmp_path):
    """Named series on a numeric reward axis, and reward vs turns without invented lines."""
    import base64
    import io

    import matplotlib

    matplotlib.use("Agg")
    rows = [
        {
            "example_id": i // 4,
            "rollout_index": i % 4,
            "reward": [0.0, 0.2, 1.0, 1.0][i % 4],
            "advantage": 0.0,
            "turns": [1, 1, 4, 4][i % 4],
            "metrics": {},
        }
        for i in range(16)
    ]
    out = vf.GenerateOutputs(
        rows=rows, metadata={"env_id": "game", "model": "tiny-model", "rollouts_per_example": 4}
    )
    images = []
    for draw in (vf.plot_rewards, vf.plot_reward_vs_turns):
        ax = draw(out)
        buf = io.BytesIO()
        ax.figure.savefig(buf, format="png")
        images.append(base64.b64encode(buf.getvalue()).decode())
    page = tmp_path / "plots.html"
    page.write_text(
        "<!doctype html><body>"
        + "".join(f"<img src='data:image/png;base64,{b}'>" for b in images)
        + "</body>",
        encoding="utf-8",
    )
    png = screenshot(page, tmp_path / "plots.png", size="1500,420")
    assert_not_blank(png)
    assert count_near(png, (0x1F, 0x77, 0xB4)) > 2000, "no matplotlib series visible"


@needs_chromium
def test_committed_notebook_reads_without_a_kernel(tmp_path):
    """What a reader on a code host sees: the committed multi-turn notebook, as static HTML."""
    import nbformat
    from nbconvert import HTMLExporter

    from tests.ui.notebook.helpers import NOTEBOOKS

    nb = nbformat.read(NOTEBOOKS / "02_custom_multiturn_env.ipynb", as_version=4)
    body, _ = HTMLExporter().from_notebook_node(nb)
    assert "stop reasons:" in body and "vf-progress" in body
    page = tmp_path / "notebook02.html"
    page.write_text(body, encoding="utf-8")
    png = screenshot(page, tmp_path / "notebook02.png", size="1280,6400")
    assert_not_blank(png)
    assert count_near(png, (0x4C, 0xAF, 0x50), tol=12) > 300, "no final progress frame visible"
    assert count_near(png, (0x1F, 0x77, 0xB4)) > 1000, "no plots visible"
