"""The test programs are modules of this checkout (``python -m tests.programs.agents``): every
program a test starts, through a ProgramEnv or by hand, must be able to import it."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.programs.helpers import child_env


@pytest.fixture(autouse=True)
def checkout_importable(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # ProgramEnv passes the driver's non-secret variables on, PYTHONPATH among them.
    monkeypatch.setenv("PYTHONPATH", child_env()["PYTHONPATH"])
    yield
    assert "PYTHONPATH" in os.environ
