"""The built docs site: strict build, a reference entry for every exported name of every public
package, every ``vf-lite`` command and option on the CLI page, nothing fetched from elsewhere."""

from __future__ import annotations

import argparse
import html
import importlib
import inspect
import pkgutil
import re
import warnings
from html.parser import HTMLParser
from pathlib import Path

import verifiers_lite
from verifiers_lite.sandbox import SandboxLimits


def _facades() -> dict[str, list[str]]:
    """package -> its ``__all__``, for every public package that exports names (found on disk)."""
    found = {"verifiers_lite": list(verifiers_lite.__all__)}
    for info in pkgutil.walk_packages(verifiers_lite.__path__, prefix="verifiers_lite."):
        if info.ispkg and "._" not in info.name:
            names = getattr(importlib.import_module(info.name), "__all__", [])
            if names:
                found[info.name] = list(names)
    return found


class _Headings(HTMLParser):
    """The text of every h1-h6 element of a page, and every tag's URL attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.urls: list[tuple[str, str, str]] = []
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if re.fullmatch(r"h[1-6]", tag):
            self._depth += 1
            self.headings.append("")
        for key, value in attrs:
            if key in ("src", "href") and value:
                self.urls.append((tag, dict(attrs).get("rel") or "", value))

    def handle_endtag(self, tag: str) -> None:
        if re.fullmatch(r"h[1-6]", tag) and self._depth:
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.headings[-1] += data


def _parse(path: Path) -> _Headings:
    parser = _Headings()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_every_exported_name_has_a_heading_on_its_package_page(built_site: Path):
    missing = {}
    for package, names in _facades().items():
        short = package if package == "verifiers_lite" else package.removeprefix("verifiers_lite.")
        page = built_site / "reference" / short.replace(".", "-") / "index.html"
        assert page.exists(), f"no reference page for {package}"
        words = {w for h in _parse(page).headings for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", h)}
        lost = sorted(
            set(names) - words - {"__version__"}
            if package == "verifiers_lite"
            else set(names) - words
        )
        if lost:
            missing[package] = lost
    assert missing == {}


def test_run_config_fields_are_documented(built_site: Path):
    import dataclasses

    text = (built_site / "reference" / "run" / "index.html").read_text(encoding="utf-8")
    fields = [f.name for f in dataclasses.fields(verifiers_lite.RunConfig)]
    assert fields and [f for f in fields if f"RunConfig.{f}" not in text] == []


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings}


def test_cli_page_lists_every_command_and_option(built_site: Path):
    from verifiers_lite.cli.parser import build_parser

    text = (built_site / "cli" / "index.html").read_text(encoding="utf-8")
    main = build_parser()
    commands = next(a for a in main._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert {"eval", "serve", "rescore", "compare", "view"} <= set(commands)
    serve = importlib.import_module("verifiers_lite.cli.serve")
    expected = {f"vf-lite {name}" for name in commands}
    expected |= {
        o for name, sub in commands.items() if name != "serve" for o in _option_strings(sub)
    }
    expected |= _option_strings(serve.build_parser())
    assert {"--port", "--max-concurrent", "--rollouts-per-example"} <= expected
    assert sorted(e for e in expected if e not in text) == []


def test_the_site_loads_no_script_style_or_font_from_elsewhere(built_site: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pages = list(built_site.rglob("*.html"))
    external = []
    for page in pages:
        for tag, rel, url in _parse(page).urls:
            loads = tag in ("script", "img", "iframe") or (
                tag == "link" and rel not in ("canonical",)
            )
            if loads and re.match(r"(https?:)?//", url):
                external.append((page.relative_to(built_site).as_posix(), tag, url))
    for sheet in built_site.rglob("*.css"):
        external += [
            (sheet.name, "css", u)
            for u in re.findall(
                r"url\(['\"]?((?:https?:)?//[^)'\"]+)", sheet.read_text(encoding="utf-8")
            )
        ]
        external += [
            (sheet.name, "css", u)
            for u in re.findall(
                r"@import\s+['\"]((?:https?:)?//[^'\"]+)", sheet.read_text(encoding="utf-8")
            )
        ]
    assert len(pages) > 5 and external == []


def test_reference_shows_no_raw_sphinx_roles(built_site: Path):
    raw = [
        p.parent.name
        for p in (built_site / "reference").rglob("*.html")
        if re.search(r":(func|class|meth|mod|attr|data|exc):<code>", p.read_text(encoding="utf-8"))
    ]
    assert raw == []


def test_changelog_is_releases_with_one_line_per_change():
    root = Path(__file__).resolve().parents[2]
    lines = (root / "CHANGELOG.md").read_text(encoding="utf-8").splitlines()
    headings = [line for line in lines if line.startswith("## ")]
    assert headings[:2] == ["## Unreleased", f"## {verifiers_lite.__version__}"]
    body = [
        line
        for line in lines[lines.index("## Unreleased") :]
        if line and not line.startswith("## ")
    ]
    assert [line for line in body if not line.startswith("- ")] == [], (
        "a change wraps onto a second line"
    )


def _text(path: Path) -> str:
    """A page's visible text, tags dropped, whitespace collapsed."""
    raw = re.sub(r"<script.*?</script>", " ", path.read_text(encoding="utf-8"), flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", raw)).split())


def _table_rows(path: Path, after: str) -> dict[str, list[str]]:
    """The first table after the element whose id is ``after``: first cell -> the other cells."""
    page = path.read_text(encoding="utf-8")
    start = page.index(f'id="{after}"')
    table = page[page.index("<table", start) : page.index("</table>", start)]
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]:
        cells = [
            " ".join(html.unescape(re.sub(r"<[^>]+>", " ", c)).split())
            for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        ]
        rows[cells[0]] = cells[1:]
    return rows


def test_constructors_list_the_parameters_they_pass_on(built_site: Path):
    """``MultiTurnEnv(*args, max_turns=10, **kwargs)`` hides the Environment's parameters: the
    page lists them all, each with its type and a description."""
    page = built_site / "reference" / "envs" / "index.html"
    for cls, own in (("multi_turn_env.MultiTurnEnv", "max_turns"), ("tool_env.ToolEnv", "tools")):
        rows = _table_rows(page, f"verifiers_lite.envs.{cls}")
        for name in (own, "dataset", "rubric", "system_prompt", "parser", "sampling_args"):
            kind, _default, description = rows[name]
            assert kind and description, (cls, name, rows[name])
        assert rows["rubric"][0] == "Rubric | None"
        assert "from Environment" in rows["dataset"][2]


def test_dataclass_parameters_are_described_and_members_keep_theirs(built_site: Path):
    """A dataclass's parameters are its fields, described by their comments; a class shown with
    its parameters' table still shows each method's description."""
    page = built_site / "reference" / "sandbox" / "index.html"
    rows = _table_rows(page, "verifiers_lite.sandbox.limits.SandboxLimits")
    assert list(rows) == list(inspect.signature(SandboxLimits).parameters)
    assert [k for k, (kind, _default, text) in rows.items() if not kind or not text] == []
    envs = _text(built_site / "reference" / "envs" / "index.html")
    assert "aclose () -> None Stop the shared MCP servers" in envs  # ToolEnv's method
    assert "over ( base : Limits | None ) -> Limits These limits with base" in _text(
        built_site / "reference" / "verifiers_lite" / "index.html"
    )


def test_option_typeddicts_document_every_key(built_site: Path):
    from verifiers_lite.run.run_config import EvaluationOptions

    page = built_site / "reference" / "run" / "index.html"
    rows = _table_rows(page, "verifiers_lite.run.run_config.EvaluationOptions")
    assert set(rows) == set(EvaluationOptions.__annotations__)
    assert [k for k, (kind, text) in rows.items() if not kind or not text] == []


def test_reference_lists_no_attribute_without_a_description(built_site: Path):
    bare = re.compile(
        r'<div class="doc doc-object doc-attribute">(?:(?!<div class="doc doc-object).)*?'
        r'<div class="doc doc-contents ">\s*</div>\s*</div>',
        re.S,
    )
    found = {
        p.parent.name: len(bare.findall(p.read_text(encoding="utf-8")))
        for p in (built_site / "reference").rglob("index.html")
    }
    assert {k: v for k, v in found.items() if v} == {}


def test_type_aliases_read_as_aliases_not_classes(built_site: Path):
    text = _text(built_site / "reference" / "verifiers_lite" / "index.html")
    entry = text[text.index("ErrorCategory ¶") :][:600]
    assert "(*args, **kwargs)" not in entry
    assert "Type alias" in entry and "model_http_error" in entry and "Why a rollout failed" in entry


def test_root_page_indexes_what_the_packages_document(built_site: Path):
    """The root re-exports what a notebook uses; each object is documented once, on its own
    package's page, and the root's entry links there: pages of a size to read."""
    root = built_site / "reference" / "verifiers_lite" / "index.html"
    page = root.read_text(encoding="utf-8")
    assert len(page) < 400_000
    assert 'href="../envs/#verifiers_lite.envs.multi_turn_env.MultiTurnEnv"' in page
    assert 'id="verifiers_lite.envs.multi_turn_env.MultiTurnEnv"' not in page
    envs = (built_site / "reference" / "envs" / "index.html").read_text(encoding="utf-8")
    assert 'id="verifiers_lite.envs.multi_turn_env.MultiTurnEnv"' in envs


def test_no_stray_rest_literal_markers(built_site: Path):
    stray = [
        p.parent.name
        for p in (built_site / "reference").rglob("index.html")
        if re.search(r"\w::\s*</p>", p.read_text(encoding="utf-8"))
    ]
    assert stray == []


def test_every_fake_model_is_documented_with_what_it_answers(built_site: Path):
    from verifiers_lite.testing.fake_server import MODELS

    page = built_site / "tutorial" / "04-scripted-model" / "index.html"
    rows = _table_rows(page, "the-fake-servers-models")
    assert sorted(rows) == sorted(MODELS) and len(MODELS) == 10
    assert [m for m, (answer,) in rows.items() if len(answer) < 20] == []


def test_pictures_are_made_by_the_build_and_shown(built_site: Path):
    """The reward plot, pass@k, a transcript's timeline, the compare page and the live widget
    mid-run: PNGs the build drew from real runs (none is in docs/), each shown on a page."""
    shown = {
        "reward-plot.png": "tutorial/03-dataframe-and-plot",
        "pass-at-k.png": "tutorial/03-dataframe-and-plot",
        "transcript-timeline.png": "guides/viewer",
        "compare-page.png": "guides/viewer",
        "live-widget.png": "guides/notebooks",
    }
    root = Path(__file__).resolve().parents[2]
    for name, page in shown.items():
        png = built_site / "pictures" / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5_000, name
        assert not list((root / "docs").rglob(name)), f"{name} is drawn by the build, not kept"
        html_page = (built_site / page / "index.html").read_text(encoding="utf-8")
        assert f'src="../../pictures/{name}"' in html_page, (name, page)
