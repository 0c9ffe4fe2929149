"""The package's seams are declared, never sniffed: no ``isinstance`` test of an executor or a
transport anywhere in the package, and no two classes of one name."""

from __future__ import annotations

import re
from pathlib import Path

import verifiers_lite

PACKAGE = Path(verifiers_lite.__file__).parent
SNIFF = re.compile(r"isinstance\(.*(Executor|Transport)\)")


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_sniffs_an_executor_or_a_transport() -> None:
    hits = [f"{p.relative_to(PACKAGE)}:{n}: {line.strip()}"
            for p in _sources() for n, line in enumerate(p.read_text().splitlines(), 1) if SNIFF.search(line)]
    assert hits == [], "declare a capability on the protocol instead of testing the class:\n" + "\n".join(hits)
