"""The embedded model's server manager: start, health, clean stop (no orphans), clear errors."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import urllib.request

import pytest

from verifiers_lite.local import supervisor as lm
from verifiers_lite.testing.waiting import wait_until


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); read its state
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_missing_extra_names_the_install_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llama_cpp" else real(name, *a),
    )
    with pytest.raises(ImportError, match=r"pip install 'verifiers_lite\[local\]'"):
        lm.LocalModel()
    with pytest.raises(ImportError, match=r"verifiers_lite\[local\]"), lm.local_model():
        pass


def test_missing_gguf_is_a_clear_error(tmp_path):
    pytest.importorskip("llama_cpp")
    with pytest.raises(FileNotFoundError, match="nope.gguf"):
        lm.LocalModel(tmp_path / "nope.gguf")


@pytest.mark.local_model
@pytest.mark.slow
def test_bad_model_fails_fast_with_the_server_output(tmp_path):
    pytest.importorskip("llama_cpp")
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"this is not a gguf file")
    with pytest.raises(lm.LocalModelError) as info, lm.local_model(bogus, startup_timeout=60):
        pass
    msg = str(info.value)
    assert "exited with code" in msg and "server output" in msg and "bogus.gguf" in msg


@pytest.mark.local_model
@pytest.mark.slow
def test_context_manager_serves_then_leaves_no_process():
    pytest.importorskip("llama_cpp")
    with lm.local_model(n_ctx=512) as (client, model):
        assert model == lm.DEFAULT_MODEL_NAME
        port = int(client.base_url.rsplit(":", 1)[1].split("/")[0])
        reply = asyncio.run(
            client.chat(model, [{"role": "user", "content": "Say hi."}], {"max_tokens": 4})
        )
        assert reply.content.strip()
        pids = _server_pids(port)
        assert pids
    assert not any(_alive(p) for p in pids)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)


@pytest.mark.local_model
@pytest.mark.slow
def test_server_is_stopped_after_an_exception_in_the_block():
    pytest.importorskip("llama_cpp")
    server = lm.LocalModel(n_ctx=512)
    with pytest.raises(RuntimeError, match="boom"), server:
        pid = server.proc.pid
        assert _alive(pid)
        raise RuntimeError("boom")
    assert not _alive(pid) and not server.running
    # the whole process group is gone too
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)


@pytest.mark.local_model
@pytest.mark.slow
def test_shared_server_is_reused_and_stoppable():
    pytest.importorskip("llama_cpp")
    try:
        c1, m1 = lm.local_model_client(n_ctx=512)
        c2, m2 = lm.local_model_client()
        assert c1.base_url == c2.base_url and m1 == m2
        pids = [s.proc.pid for s in lm._shared]
        # One server process per core (at most 4) by default, as `vf-lite eval`.
        assert len(pids) == len(set(pids)) == min(4, len(os.sched_getaffinity(0)))
        if len(pids) > 1:
            assert isinstance(c1, lm.ClientGroup) and len({c.base_url for c in c1}) == len(pids)
        c3, _ = lm.local_model_client(parallel=1)
        assert isinstance(c3, lm.ChatClient) and len(lm._shared) == 1
        pids.append(lm._shared[0].proc.pid)
    finally:
        lm.stop_shared_local_model()
    assert not any(_alive(p) for p in pids)


def _server_pids(port: int) -> list[int]:
    """PIDs of processes whose command line names ``--port <port>`` (our child only)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if b"verifiers_lite.local.llama_server" in args and str(port).encode() in args:
            pids.append(int(entry))
    return pids


def test_signal_group_ignores_missing_processes():
    lm._signal_group(2**22 + 12345, signal.SIGTERM)  # no such group: must not raise


@pytest.mark.local_model
@pytest.mark.slow
def test_server_dies_with_a_killed_parent(tmp_path):
    """Even a SIGKILLed parent (no finally, no atexit) leaves no orphan server."""
    pytest.importorskip("llama_cpp")
    import subprocess
    import sys

    script = (
        "import sys, time\n"
        "from verifiers_lite.local.supervisor import LocalModel\n"
        "m = LocalModel(n_ctx=512).start()\n"
        "print(m.proc.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(parent.stdout.readline())
        assert _alive(pid)
    finally:
        parent.kill()
        parent.wait()
    wait_until(
        lambda: not _alive(pid),
        "the model server dies with the process that started it",
        timeout=10,
    )


@pytest.mark.local_model
@pytest.mark.slow
def test_parallel_servers_yield_one_client_each_and_all_stop():
    pytest.importorskip("llama_cpp")
    with lm.local_model(parallel=2, n_ctx=512) as (clients, model):
        assert isinstance(clients, list) and len(clients) == 2
        ports = [int(c.base_url.rsplit(":", 1)[1].split("/")[0]) for c in clients]
        pids = [p for port in ports for p in _server_pids(port)]
        assert len(set(ports)) == 2 and len(pids) == 2
        for c in clients:
            assert asyncio.run(
                c.chat(model, [{"role": "user", "content": "Hi"}], {"max_tokens": 2})
            ).message
    assert not any(_alive(p) for p in pids)
    with pytest.raises(ValueError, match="parallel"):
        lm.start_servers(0)


@pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or (os.cpu_count() or 1) < 2,
    reason="needs an affinity call and two CPUs",
)
def test_servers_are_sized_by_the_cpus_the_process_may_use():
    # Under a one-CPU mask (as `taskset -c 0` gives) the machine still has its cores: one server
    # of one thread, not one per machine core.
    import subprocess
    import sys

    one = min(os.sched_getaffinity(0))
    code = "from verifiers_lite.local import supervisor as s; print(s.default_parallel())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        preexec_fn=lambda: os.sched_setaffinity(0, {one}),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert out.stdout.strip() == "1", out.stderr
