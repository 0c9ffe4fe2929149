"""Every internal link of README.md and of the docs pages leads somewhere: the file exists and its
``#anchor`` is a heading of the target page, slugged as the site slugs it (Python-Markdown's toc
``slugify``: markup dropped, accents folded to ASCII, punctuation dropped, lowercase, runs of
spaces and hyphens one ``-``; a repeated heading gets ``_1``, ``_2``). A docs page links only
inside docs/ (the site has no other files). The reference pages (``reference/*.md``) and the
CLI page (``cli.md``) are generated at build time, so only their names are checked here; the
strict site build checks their anchors."""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from pathlib import Path

import pytest

from tests.docs import doc_blocks as rb

_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)
_FENCE = re.compile(r"^\s*(```|~~~)")


def slugify(heading: str) -> str:
    """A heading's anchor as the site makes it (see the module docstring)."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link's text stays, its target goes
    text = re.sub(r"<[^>]+>|[*_]{1,2}(?=\S)|(?<=\S)[*_]{1,2}", "", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """The page's lines outside fenced code blocks, with their 1-based numbers."""
    out, fenced = [], False
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            out.append((n, line))
    return out


def anchors(path: Path) -> set[str]:
    """The anchors of a page's headings (``#`` headings outside code blocks)."""
    seen: dict[str, int] = {}
    for _, line in prose_lines(path):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = slugify(m[1])
        seen[slug] = seen.get(slug, -1) + 1
        if seen[slug]:
            seen[f"{slug}_{seen[slug]}"] = 0
    return set(seen)


def links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every link and image outside code (inline code spans dropped first)."""
    out = []
    for n, line in prose_lines(path):
        for m in _LINK.finditer(re.sub(r"`[^`]*`", "", line)):
            out.append((n, m[1]))
    return out


PAGES = rb.pages()
GENERATED = re.compile(r"^(?:reference/[\w-]+|cli)\.md$")


def _pictures() -> set[str]:
    """The pictures the site build draws (``scripts/docs_pictures.py``), as docs/ paths."""
    spec = importlib.util.spec_from_file_location(
        "docs_pictures", rb.REPO / "scripts" / "docs_pictures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {f"pictures/{name}" for name in module.PICTURES}


PICTURES = _pictures()


def _generated(dest: Path) -> bool:
    """A page or picture the site build writes (the API and CLI reference, the pictures drawn
    from real runs), not a file under docs/."""
    if rb.DOCS not in dest.parents:
        return False
    rel = dest.relative_to(rb.DOCS).as_posix()
    return bool(GENERATED.match(rel)) or rel in PICTURES


def broken_links(page: Path) -> list[str]:
    """What is wrong with each internal link of ``page``."""
    wrong = []
    in_docs = rb.DOCS in page.parents
    for n, target in links(page):
        if _EXTERNAL.match(target):
            continue
        where = f"{page.relative_to(rb.REPO)}:{n}: {target}"
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if _generated(dest):
            continue
        if not dest.exists():
            wrong.append(
                f"{where}: no file {dest.relative_to(rb.REPO) if rb.REPO in dest.parents else dest}"
            )
        elif in_docs and rb.DOCS not in dest.parents:
            wrong.append(f"{where}: outside docs/ (the site has no such page)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            wrong.append(
                f"{where}: no heading with anchor #{anchor} in {dest.relative_to(rb.REPO)}"
            )
    return wrong


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(rb.REPO)) for p in PAGES])
def test_every_internal_link_and_anchor_resolves(page: Path) -> None:
    assert not broken_links(page)


def test_slugs_are_the_sites() -> None:
    # worked out by hand from Python-Markdown's toc slugify, the site's default
    assert (
        slugify("Statistics: error bars and comparing runs")
        == "statistics-error-bars-and-comparing-runs"
    )
    assert (
        slugify("Running untrusted code: `vf.Sandbox`, `vf.PythonEnv`")
        == "running-untrusted-code-vfsandbox-vfpythonenv"
    )
    assert slugify("Reading runs: `vf-lite view`") == "reading-runs-vf-lite-view"
    assert (
        slugify("Re-scoring a run, and what produced it") == "re-scoring-a-run-and-what-produced-it"
    )
    assert slugify("Thinking — models & images") == "thinking-models-images"


def test_a_broken_link_or_anchor_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Top\n\n## Two words\n\n[ok](#two-words) [gone](#three) [file](missing.md)\n"
        "```\n[in code](#nowhere)\n```\n",
        encoding="utf-8",
    )
    rb_repo = rb.REPO
    try:
        rb.REPO = tmp_path
        found = broken_links(page)
    finally:
        rb.REPO = rb_repo
    assert [w.split(": ", 2)[1] for w in found] == ["#three", "missing.md"], found
