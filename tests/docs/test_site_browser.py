"""The built docs site in Debian's headless Chromium (Playwright, no browser download), served
by ``python -m http.server`` on 127.0.0.1: screenshots of the home page, a tutorial page, a
guide, a reference page and a search, kept in $VF_TEST_ARTIFACTS (default
outputs/test-artifacts) as docs-*.png; the search finds the names a reader looks for."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import CHROMIUM, NO_CHROMIUM, NO_PLAYWRIGHT, TIMEOUT_MS, launch_chromium
from tests.helpers.paths import DOCS

sync_api = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT)
if CHROMIUM is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)


@pytest.fixture(scope="module")
def site_url(built_site: Path) -> Iterator[str]:
    """The built site served on a free port of 127.0.0.1; the port read from the server's line."""
    proc = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"],
        cwd=built_site,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        line = ""
        while time.monotonic() < deadline and "port" not in line:
            line = proc.stdout.readline()  # type: ignore[union-attr]
        port = re.search(r"port (\d+)", line)
        assert port, f"http.server gave no port: {line!r}"
        yield f"http://127.0.0.1:{port.group(1)}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_chromium()


@pytest.fixture
def page(browser, site_url):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    pg.outside = []  # type: ignore[attr-defined]
    pg.on(
        "request",
        lambda r: (
            r.url.startswith(site_url) or r.url.startswith("data:") or pg.outside.append(r.url)
        ),
    )  # type: ignore[attr-defined]
    yield pg
    assert pg.outside == [], f"the page fetched from elsewhere: {pg.outside}"  # type: ignore[attr-defined]
    ctx.close()


@pytest.fixture
def artifacts_dir() -> Path:
    base = Path(os.environ.get("VF_TEST_ARTIFACTS") or "outputs/test-artifacts")
    base.mkdir(parents=True, exist_ok=True)
    return base


def _first_page(folder: str) -> str:
    pages = sorted((DOCS / folder).glob("*.md"))
    if not pages:
        pytest.skip(f"no docs/{folder}/ pages yet")
    return f"{folder}/{pages[0].stem}/"


def _page_path(kind: str) -> str:
    if kind == "home":
        if not (DOCS / "index.md").exists():
            pytest.skip("no docs/index.md yet")
        return ""
    if kind in ("tutorial", "guides"):
        return _first_page(kind)
    return "reference/verifiers_lite/"


@pytest.mark.parametrize("kind", ["home", "tutorial", "guides", "reference"])
def test_page_renders_with_the_theme(page, site_url, artifacts_dir, kind):
    page.goto(f"{site_url}/{_page_path(kind)}")
    page.wait_for_selector("article.md-content__inner h1")
    # the theme's stylesheet applied (served from the site itself): the header bar is laid out
    assert page.locator("header.md-header").bounding_box()["height"] > 20
    page.screenshot(path=str(artifacts_dir / f"docs-{kind}.png"), full_page=False)


def _search(page, query: str) -> list[str]:
    box = page.locator("input.md-search__input")
    box.fill("")
    box.click()
    box.press_sequentially(query)
    page.wait_for_function(
        """q => [...document.querySelectorAll('.md-search-result__item')]
              .some(e => e.innerText.includes(q))""",
        arg=query,
    )
    return page.locator(".md-search-result__item").all_inner_texts()


def test_search_finds_the_names_a_reader_looks_for(page, site_url, artifacts_dir):
    page.goto(f"{site_url}/reference/verifiers_lite/")
    for name in ["MultiTurnEnv", "compare_runs", "rescore", "evaluate_sync"]:
        results = _search(page, name)
        assert any(name in text for text in results), results[:5]
    page.screenshot(path=str(artifacts_dir / "docs-search.png"), full_page=False)


def test_search_finds_the_tutorial_page_for_evaluate_sync(page, site_url):
    page.goto(f"{site_url}/")
    _search(page, "evaluate_sync")
    links = page.locator(".md-search-result__item a").evaluate_all("els => els.map(e => e.href)")
    assert any("tutorial/02-first-evaluation/" in href for href in links), links


def test_no_code_line_is_clipped_on_any_page(page, site_url, built_site):
    """At 1280 px every code block of every page shows its lines whole (wrapped or fitting)."""
    pages = sorted(p.parent.relative_to(built_site) for p in built_site.rglob("index.html"))
    pages = [p for p in pages if p.parts[:1] not in (("assets",), ("search",))]
    assert len(pages) > 30
    clipped = {}
    for rel in pages:
        page.goto(f"{site_url}/{rel.as_posix()}/".replace("/./", "/"))
        wide = page.evaluate(
            """() => [...document.querySelectorAll('pre > code')]
                 .filter(c => c.scrollWidth > c.clientWidth + 1)
                 .map(c => c.innerText.split('\\n').sort((a, b) => b.length - a.length)[0])"""
        )
        if wide:
            clipped[str(rel)] = wide[:3]
    assert clipped == {}


def test_table_of_contents_follows_the_reading(page, site_url):
    """A reference page's table of contents marks, and scrolls to, the entry being read."""
    page.goto(f"{site_url}/reference/envs/")
    target = "verifiers_lite.envs.tool_env.ToolEnv"
    page.evaluate("id => document.getElementById(id).scrollIntoView({block: 'start'})", target)
    page.mouse.wheel(0, 60)
    page.wait_for_function(
        """id => { const a = document.querySelector('.md-sidebar--secondary .md-nav__link--active');
                   return a && a.getAttribute('href') === '#' + id; }""",
        arg=target,
    )
    active = page.locator(".md-sidebar--secondary .md-nav__link--active").bounding_box()
    sidebar = page.locator(".md-sidebar--secondary .md-sidebar__scrollwrap").bounding_box()
    assert sidebar["y"] <= active["y"] <= sidebar["y"] + sidebar["height"] - active["height"]
