"""Shared fixtures: one fake OpenAI-compatible server per test session, reset per test."""

from __future__ import annotations

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
