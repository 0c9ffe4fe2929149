"""The test servers' one lifecycle (``testing/server_process.py``): each server starts in its own
session, answers once healthy and is always stopped, its port free again; a child that exits
first is reported with its stderr, one that never answers is stopped at the deadline."""

from __future__ import annotations

import json
import os
import socket
import sys
import urllib.request
from pathlib import Path

import pytest

from verifiers_lite.testing.conversation_server import ConversationServerProcess
from verifiers_lite.testing.fake_server import FakeServerProcess
from verifiers_lite.testing.server_process import ServerProcess


def _chat(base_url: str, model: str) -> dict:
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "What is 2 + 3?"}]})
    req = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=body.encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    return json.loads(urllib.request.urlopen(req, timeout=10).read())


def _port_is_free(port: int) -> bool:
    """Nothing listens on ``port`` (connections the server closed may linger in TIME_WAIT: a
    new server may bind over them, as uvicorn does)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@pytest.mark.parametrize(
    ("server", "model"),
    [(FakeServerProcess, "fake-echo"), (ConversationServerProcess, "conversation-model")],
)
def test_a_server_answers_once_started_and_is_stopped_on_exit(server, model):
    with server() as s:
        assert os.getsid(s.proc.pid) == s.proc.pid  # its own session: a Ctrl-C here spares it
        answer = _chat(s.base_url, model)
        assert answer["choices"][0]["message"]["role"] == "assistant"
        assert s.request_json("/_control/stats")["requests"] == 1
        assert not _port_is_free(s.port)
    assert s.proc.returncode is not None and s.proc.stderr.closed
    assert _port_is_free(s.port)
    s.stop()  # a second stop is harmless


def test_the_fake_servers_controls_are_posted_and_read_back():
    with FakeServerProcess(correct_rate=1.0) as s:
        s.configure(system_fingerprint="fp-1")
        assert _chat(s.base_url, "fake-arith")["system_fingerprint"] == "fp-1"
        assert [r["model"] for r in s.requests()] == ["fake-arith"]
        s.reset()
        assert s.stats()["requests"] == 0 and s.requests() == []


class _Missing(ServerProcess):
    module = "verifiers_lite.testing.no_such_server"
    name = "missing server"


class _NeverHealthy(ServerProcess):
    module = "never_healthy"
    name = "silent server"


def test_a_child_that_exits_first_is_reported_with_its_stderr():
    with pytest.raises(RuntimeError, match="missing server exited with 1: .*No module named"):
        _Missing().start()


def test_a_child_that_never_answers_is_stopped_at_the_deadline(tmp_path: Path, monkeypatch):
    (tmp_path / "never_healthy.py").write_text("import time\ntime.sleep(600)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), *sys.path]))
    server = _NeverHealthy()
    with pytest.raises(TimeoutError, match="silent server on port .* not healthy within 1.0s"):
        server.start(timeout=1.0)
    assert server.proc is not None and server.proc.returncode is not None
