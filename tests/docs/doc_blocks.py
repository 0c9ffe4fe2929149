"""The code blocks of README.md and of every docs page (docs/**/*.md), with what each page's
markers say about each.

A marker is an HTML comment on the line just before a block's opening fence; it reads
``<!-- readme: ... -->`` or, alike, ``<!-- docs: ... -->``:

- ``<!-- readme: skip (REASON) -->``: the block cannot run here (a GPU, an API key, a network
  install); its ``vf-lite`` command lines are still parsed by the real argument parsers.
- ``<!-- readme: synopsis -->``: a usage summary; every subcommand and option it names must exist.
- ``<!-- readme: output of `COMMAND` -->``: printed output; the test runs COMMAND (bash, in a
  scratch directory, ``$FAKE_URL`` the fake model server's base URL) and compares the shape
  (lines, labels, order, wording), not the numbers.
- ``<!-- readme: setup `CODE` -->``: Python run (unseen) before the block, for names the reader
  has from context (``urls``, ``solve``).

Unmarked Python and shell blocks are executed; an unmarked block of another kind fails the test,
so a new block is covered by default.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers.paths import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
PYTHON, SHELL = ("python", "py"), ("bash", "sh", "shell", "console")
_FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w-]*)\s*$")
_MARKER = re.compile(
    r"<!--\s*(?:readme|docs):\s*(?P<kind>skip|synopsis|output of|setup)\b(?P<arg>.*?)-->"
)


@dataclass
class Block:
    """One fenced code block of a page."""

    page: str  # the page's path from the repository root
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    kind: str = "run"  # run | skip | synopsis | output | setup-run
    arg: str = ""  # the skip reason, the command whose output it is, or the setup code
    section: str = ""

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line} ({self.lang or 'text'}{', ' + self.section if self.section else ''})"

    @property
    def setup(self) -> str:
        return self.arg if self.kind == "setup-run" else ""


@dataclass
class Page:
    """One markdown page and its blocks."""

    path: str  # from the repository root
    blocks: list[Block] = field(default_factory=list)

    def of(self, *kinds: str, langs: tuple[str, ...] | None = None) -> list[Block]:
        return [b for b in self.blocks if b.kind in kinds and (langs is None or b.lang in langs)]


def pages() -> list[Path]:
    """README.md, then every docs page in the site's reading order: the home page, the tutorial
    (its files are numbered in order), the guides, then the rest."""
    rank = {"index.md": 0, "tutorial": 1, "guides": 2}
    found = sorted(
        DOCS.rglob("*.md"), key=lambda p: (rank.get(p.relative_to(DOCS).parts[0], 3), str(p))
    )
    return [README, *found]


def parse(path: Path = README) -> Page:
    """Every fenced block of ``path`` with its marker and section heading."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, section, i = Page(str(path.relative_to(REPO))), "", 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        fence = _FENCE.match(line)
        if not fence:
            i += 1
            continue
        indent, body, j = fence["indent"], [], i + 1
        while j < len(lines) and not re.match(rf"^{indent}```\s*$", lines[j]):
            body.append(
                lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j].lstrip()
            )
            j += 1
        block = Block(
            page=out.path,
            line=i + 1,
            lang=fence["lang"].lower(),
            code="\n".join(body) + "\n",
            section=section,
        )
        _apply_marker(block, lines[i - 1] if i else "")
        out.blocks.append(block)
        i = j + 1
    return out


def _apply_marker(block: Block, previous: str) -> None:
    marker = _MARKER.search(previous)
    if not marker:
        return
    kind, arg = marker["kind"], marker["arg"].strip()
    if kind == "skip":
        block.kind, block.arg = "skip", arg.strip("() ")
    elif kind == "synopsis":
        block.kind = "synopsis"
    elif kind == "output of":
        block.kind, block.arg = "output", arg.strip().strip("`")
    else:
        block.kind, block.arg = "setup-run", arg.strip().strip("`")


def command_lines(code: str) -> list[str]:
    """Shell command lines of a block: continuations joined, comments and blank lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", code)
    lines, pending = [], ""
    for line in joined.splitlines():
        pending = f"{pending}\n{line}" if pending else line
        try:
            words = shlex.split(pending, comments=True)
        except ValueError:  # a quoted string that goes on on the next line
            continue
        pending = ""
        if words:
            lines.append(shlex.join(words))
    return lines


def vf_lite_commands(code: str) -> list[list[str]]:
    """The ``vf-lite`` command lines of a block, as argument lists (without ``vf-lite``)."""
    return [shlex.split(c)[1:] for c in command_lines(code) if c.split()[0] == "vf-lite"]
