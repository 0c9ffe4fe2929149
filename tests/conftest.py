"""Fixtures shared by more than one test folder: the fake model server, the embedded model,
rollout server processes, a type check of a snippet against the package, and the check that
every test leaves asyncio as it found it.

A fixture used by one folder only lives in that folder's conftest.py."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.paths import REPO
from verifiers_lite.testing.clock import ManualClock
from verifiers_lite.testing.fake_server import FakeServerProcess

if TYPE_CHECKING:
    from tests.server.helpers import ServerProc


# --- the fake OpenAI-compatible model server: one per session, reset per test ---------------


@pytest.fixture(scope="session")
def fake_server_process():
    with FakeServerProcess() as server:
        yield server


@pytest.fixture
def fake_server(fake_server_process: FakeServerProcess) -> FakeServerProcess:
    fake_server_process.reset()
    fake_server_process.configure(latency_ms=0, correct_rate=0.5, faults=[])
    return fake_server_process


# --- the embedded model (SmolLM2-135M on llama.cpp; the 'local' extra) -------------------------


@pytest.fixture(scope="session")
def local_llm():
    """One embedded llama.cpp server (SmolLM2-135M) for the whole test session.

    Skipped only when llama-cpp-python is not installed (the ``local`` extra).
    """
    pytest.importorskip(
        "llama_cpp", reason="needs the 'local' extra: pip install 'verifiers_lite[local]'"
    )
    from verifiers_lite.local.supervisor import LocalModel

    with LocalModel() as server:
        yield server


@pytest.fixture(scope="session")
def llama() -> Any:
    """The SmolLM2 model in process (llama.cpp), loaded once per session."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama_cpp not importable: pip install 'verifiers_lite[local]'")
    from verifiers_lite.rollout.samplers.llama_cpp import load_llama

    return load_llama(n_ctx=1024, n_threads=1)


@pytest.fixture(scope="session")
def llama_sampler(llama: Any) -> Any:
    from verifiers_lite.rollout import LlamaCppSampler

    return LlamaCppSampler(llama)


@pytest.fixture(scope="session")
def llama_template(llama: Any) -> Any:
    from verifiers_lite.rollout import Template

    return Template.from_llama(llama)


# --- rollout servers: real uvicorn processes on 127.0.0.1 (tests/server, tests/remote) -------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProc]:
    """A shared scripted rollout server (default timeouts, max_admitted 8, 4 concurrent)."""
    from tests.server.helpers import start_server

    srv = start_server(tmp_path_factory.mktemp("srv"), max_admitted=8, max_concurrent=4, wait=2)
    yield srv
    srv.stop()


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Any]:
    """Start extra scripted rollout servers with custom options; killed at teardown."""
    from tests.server.helpers import start_server

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


# --- a type check of a snippet against the package (the typing tests of several packages) -----


@pytest.fixture
def mypy_errors(tmp_path: Path) -> Callable[[str], list[tuple[int, str]]]:
    """Type-check a module's source against the package (mypy, as the suite runs it):
    ``[(line, error code), ...]``, one per error."""

    def check(source: str) -> list[tuple[int, str]]:
        module = tmp_path / "snippet.py"
        module.write_text(source)
        proc = subprocess.run(
            [sys.executable, "-m", "mypy", "--follow-imports=silent", str(module)],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=REPO,
        )
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # 2: mypy itself failed
        found = re.findall(r"^.*snippet\.py:(\d+): error: .*\[([\w-]+)\]$", proc.stdout, re.M)
        assert len(found) == proc.stdout.count(": error:"), proc.stdout
        return [(int(line), code) for line, code in found]

    return check


# --- every test leaves asyncio's global state as it found it ---------------------------------


@pytest.fixture(autouse=True)
def asyncio_left_as_found():
    """Every test leaves asyncio's global state (policy, entry points, loop classes) as it found
    it, so no test depends on the order it runs in; one that does not is put right and fails."""
    from verifiers_lite.testing import loop_state

    before = loop_state.snapshot()
    yield
    changed = loop_state.changes(before, loop_state.snapshot())
    if changed:
        loop_state.restore(before)
        pytest.fail(f"the test left asyncio changed: {', '.join(changed[:8])}")
