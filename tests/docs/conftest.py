"""Fixtures of the docs tests: the docs site, built once per test session with ``mkdocs build
--strict`` (a real subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO


def _build_site(target: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of this checkout into ``target``; any warning fails it."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "environments")]),
        "NO_MKDOCS_2_WARNING": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(target)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site of this checkout's docs, built strictly (any warning fails the build)."""
    pytest.importorskip("mkdocs", reason="the docs extra (pip install -e '.[docs]')")
    target = tmp_path_factory.mktemp("site") / "site"
    done = _build_site(target)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return target
