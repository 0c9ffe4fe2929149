"""Fixtures for the rollout server tests (real uvicorn processes on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from srv_helpers import ServerProc, start_server

from verifiers_lite.testing.clock import ManualClock


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProc]:
    """A shared scripted server (default timeouts, max_admitted 8, 4 concurrent)."""
    srv = start_server(tmp_path_factory.mktemp("srv"), max_admitted=8, max_concurrent=4, wait=2)
    yield srv
    srv.stop()


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Any]:
    """Start extra servers with custom options; killed at teardown."""
    started: list[ServerProc] = []

    def _spawn(**opts: Any) -> ServerProc:
        srv = start_server(tmp_path, **opts)
        started.append(srv)
        return srv

    yield _spawn
    for srv in started:
        srv.stop()


@pytest.fixture
def fake_clock() -> ManualClock:
    """Time advances only when the client sleeps; every sleep is recorded."""
    return ManualClock(1000.0, advance_on_sleep=True)
