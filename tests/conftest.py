"""Shared fixtures: one fake OpenAI-compatible server per test session, reset per test; a type
check of a snippet against the package."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from verifiers_lite.testing.fake_server import FakeServerProcess


@pytest.fixture(scope="session")
def fake_server_process():
    with FakeServerProcess() as server:
        yield server


@pytest.fixture
def fake_server(fake_server_process: FakeServerProcess) -> FakeServerProcess:
    fake_server_process.reset()
    fake_server_process.configure(latency_ms=0, correct_rate=0.5, faults=[])
    return fake_server_process


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
            cwd=Path(__file__).resolve().parents[1],
        )
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # 2: mypy itself failed
        found = re.findall(r"^.*snippet\.py:(\d+): error: .*\[([\w-]+)\]$", proc.stdout, re.M)
        assert len(found) == proc.stdout.count(": error:"), proc.stdout
        return [(int(line), code) for line, code in found]

    return check


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
