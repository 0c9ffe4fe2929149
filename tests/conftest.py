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
    pytest.importorskip("llama_cpp", reason="needs the 'local' extra: pip install 'verifiers_lite[local]'")
    from verifiers_lite.local.supervisor import LocalModel

    with LocalModel() as server:
        yield server
