"""The executed quickstart and a results table, rendered to HTML and opened in headless Chromium.

Needs Debian's chromium (``.ci/install_chromium.sh``); skipped, with that hint, without it.
Widgets need a CDN-loaded manager and stay empty offline; the progress display's static final
frame, the plots and the results tables must all show.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import verifiers_lite as vf

from .sample_rows import tool_rows

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (run .ci/install_chromium.sh)")


def screenshot(html_file: Path, png: Path, size: str = "1280,1600") -> Path:
    """Open ``html_file`` in a fresh headless Chromium profile and save a screenshot."""
    with tempfile.TemporaryDirectory(prefix="vf-chromium-") as profile:
        proc = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={png}", f"--window-size={size}",
             html_file.resolve().as_uri()],
            capture_output=True, text=True, timeout=120,
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
    assert stddev > 8 and dark > 2000, f"{png.name} looks blank (stddev={stddev:.1f}, dark pixels={dark})"


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
    out = vf.GenerateOutputs(rows=tool_rows(), metadata={"env_id": "calc", "model": "m", "rollouts_per_example": 2})
    page = tmp_path / "results.html"
    page.write_text(f"<!doctype html><meta charset='utf-8'><body>{out._repr_html_()}</body>", encoding="utf-8")
    png = screenshot(page, tmp_path / "results.png", size="1100,700")
    assert_not_blank(png)
    assert count_near(png, (0xC6, 0x28, 0x28), tol=40) > 50, "error category not shown in red"
