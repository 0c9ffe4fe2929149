"""Debian's headless Chromium driven by Playwright (no browser download), for the tests that open
pages: skipped, with how to install it, where it is missing."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NO_CHROMIUM = "chromium not installed (run .ci/install_chromium.sh)"
NO_PLAYWRIGHT = "needs playwright (the dev extra)"
TIMEOUT_MS = 30_000


def launch_chromium() -> Iterator[Any]:
    """One headless Chromium (a fixture's body: yields the browser, closes it after); the test
    is skipped, saying what to install, without Playwright or Chromium."""
    import pytest

    sync_api = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT)
    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        yield browser
        browser.close()
