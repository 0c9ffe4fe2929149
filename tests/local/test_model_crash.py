"""A model server that dies is reported as a crash: at start-up (before it is called healthy)
and mid-run (rows keep what finished, crashed rollouts say so, the CLI's last line names it)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import verifiers_lite as vf
from verifiers_lite.local import cpu_safety
from verifiers_lite.local import supervisor as lm
from verifiers_lite.testing.waiting import wait_until

# A stand-in for a llama.cpp server on a CPU where decoding crashes: it lists its model, then
# dies of SIGSEGV on the first completion (what a native build does on AMX CPUs).
_CRASH_ON_DECODE = r"""
import json, os, signal, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        body = json.dumps({"data": [{"id": "m"}]}).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        print("ggml_backend_amx_mul_mat: about to crash", flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


class _CrashOnDecode(lm.LocalModel):
    def command(self) -> list[str]:
        return [sys.executable, "-c", _CRASH_ON_DECODE, str(self.port)]


_AMX_BUILD = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | REPACK = 1 |"
_PORTABLE_BUILD = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | REPACK = 1 |"


@pytest.mark.parametrize(
    "build_info", [_AMX_BUILD, _PORTABLE_BUILD], ids=["amx-build", "portable-build"]
)
def test_startup_requires_a_real_decode(tmp_path, monkeypatch, build_info):
    pytest.importorskip("llama_cpp")
    monkeypatch.setattr(cpu_safety, "installed_build_info", lambda: build_info)
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    server = _CrashOnDecode(gguf, startup_timeout=60)
    with pytest.raises(lm.LocalModelError) as info:
        server.start()
    msg = str(info.value)
    assert "killed by signal 11 (SIGSEGV) during its first decode" in msg
    assert "ggml_backend_amx_mul_mat" in msg
    # The reinstall advice only when the build has AMX kernels; a portable build gets a neutral hint.
    assert ("GGML_NATIVE=OFF" in msg) == (build_info == _AMX_BUILD)
    assert ("no AMX kernels" in msg) == (build_info == _PORTABLE_BUILD)
    assert not server.running


def _server_pids_of(parent_pid: int) -> list[int]:
    """pids of the embedded llama.cpp servers started (directly) by ``parent_pid``."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent_pid and "verifiers_lite.local.llama_server" in cmd:
            out.append(int(d.name))
    return out


@pytest.mark.local_model
@pytest.mark.slow
def test_server_killed_mid_run_gives_crash_rows_and_keeps_finished_ones():
    pytest.importorskip("llama_cpp")
    env = vf.load_environment("arithmetic", num_examples=6)
    server = lm.LocalModel(n_ctx=512).start()
    logs: list[str] = []

    def kill_after_first_group(stats, rows):
        if stats.done == 2 and server.running:
            os.kill(server.proc.pid, signal.SIGSEGV)

    try:
        out = env.evaluate_sync(
            server.client(),
            server.model_name,
            num_examples=6,
            rollouts_per_example=2,
            max_concurrent=1,
            progress=False,
            on_progress=kill_after_first_group,
            on_log=logs.append,
        )
    finally:
        server.stop()
    by_example: dict[int, list[dict]] = {}
    for r in out.rows:
        by_example.setdefault(r["example_id"], []).append(r)
    finished = [r for r in out.rows if not r.get("error")]
    crashed = [r for r in out.rows if (r.get("error") or {}).get("category") == "model_crashed"]
    assert len(out.rows) == 12
    assert len(finished) >= 2 and all(r["completion"] for r in finished)
    assert len(crashed) == 12 - len(finished) and len(crashed) >= 8
    assert all("SIGSEGV" in r["error"]["message"] for r in crashed)
    # A SIGSEGV sent from outside: the hint follows the installed build (AMX advice only for AMX kernels).
    amx_build = cpu_safety.build_has_amx(cpu_safety.installed_build_info() or "")
    assert all(("GGML_NATIVE=OFF" in r["error"]["message"]) == amx_build for r in crashed)
    assert any("model server crashed" in m and "SIGSEGV" in m for m in logs)
    # Dead at once: no request is retried against the closed port (a retried one would say
    # "after N attempts"), whatever the machine's load.
    assert not any("attempts)" in r["error"]["message"] for r in crashed)


@pytest.mark.local_model
@pytest.mark.slow
def test_cli_names_the_crash_in_its_last_line(tmp_path):
    pytest.importorskip("llama_cpp")
    cmd = [
        sys.executable,
        "-m",
        "verifiers_lite.cli",
        "eval",
        "arithmetic",
        "-n",
        "8",
        "-r",
        "2",
        "-c",
        "1",
        "--parallel",
        "1",
        "--threads",
        "1",
        "--n-ctx",
        "512",
        "-s",
        str(tmp_path),
        "--no-plot",
        "-q",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        results = lambda: list(tmp_path.glob("*/*/results.jsonl"))  # noqa: E731
        path = wait_until(results, "the run to start", timeout=240)[0]
        wait_until(
            lambda: path.read_text().count("\n") >= 2, "the first finished group", timeout=240
        )
        pids = wait_until(lambda: _server_pids_of(proc.pid), "the server pid", timeout=10)
        os.kill(pids[0], signal.SIGSEGV)
        stdout, stderr = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, stderr[-3000:]
    last = stderr.strip().splitlines()[-1]
    assert "model server crash" in last and "SIGSEGV" in last and "Hint:" in last, last
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 16
    ok = [r for r in rows if not r.get("error")]
    assert len(ok) >= 2 and all(r["completion"] for r in ok)
    assert {r["error"]["category"] for r in rows if r.get("error")} == {"model_crashed"}
    assert "model_crashed=" in stdout
