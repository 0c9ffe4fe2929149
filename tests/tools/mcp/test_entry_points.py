"""The bundled ``mcp_calculator`` environment from ``vf-lite eval``, behind a rollout server
(in process, and ``vf-lite serve`` driven by ``RemoteExecutor``); servers stopped at the end."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import psutil

import verifiers_lite as vf
from tests.helpers.paths import REPO
from tests.tools.mcp.helpers import server_processes
from verifiers_lite.server import LocalBackend
from verifiers_lite.server.protocol import RolloutRequest
from verifiers_lite.server.service import RolloutService
from verifiers_lite.testing.fake_server import FakeServerProcess, free_port
from verifiers_lite.testing.waiting import wait_until


def _hand(question: str) -> str:
    a, op, b = re.search(r"(\d+) ([+\-*]) (\d+)", question).groups()  # type: ignore[union-attr]
    return str({"+": int(a) + int(b), "-": int(a) - int(b), "*": int(a) * int(b)}[op])


def _env() -> dict[str, str]:
    paths = [str(REPO), str(REPO / "environments"), os.environ.get("PYTHONPATH", "")]
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "PYTHONUNBUFFERED": "1",
    }


def _children() -> list[psutil.Process]:
    """This process's example-server children."""
    return [
        p
        for p in psutil.Process().children(recursive=True)
        if "verifiers_lite_envs._mcp_server" in p.cmdline() and p.status() != psutil.STATUS_ZOMBIE
    ]


def test_vf_lite_eval_runs_the_bundled_mcp_environment(
    fake_server: FakeServerProcess, tmp_path: Path
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "verifiers_lite.cli",
            "eval",
            "mcp_calculator",
            "-b",
            fake_server.base_url,
            "-m",
            "fake-tool",
            "-n",
            "3",
            "-r",
            "2",
            "-s",
            str(tmp_path / "out"),
            "-a",
            json.dumps({"lifetime": "rollout"}),
        ],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (results,) = (tmp_path / "out").glob("*/*/results.jsonl")
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(rows) == 6
    for row in rows:
        expected = _hand(row["prompt"][-1]["content"])
        assert row["answer"] == expected and row["reward"] == 1.0 and row["error"] is None
        assert [m["content"] for m in row["completion"] if m["role"] == "tool"] == [expected]
    assert server_processes(cwd=str(tmp_path)) == []  # the servers the command started are gone


async def test_a_rollout_server_shares_one_mcp_server_and_stops_it_at_shutdown(
    fake_server: FakeServerProcess,
) -> None:
    env = vf.load_environment("mcp_calculator", num_examples=3)
    backend = LocalBackend(env, model="fake-tool")
    service = RolloutService(backend, polling_lease_timeout_sec=60, result_retention_sec=60)
    records = [
        service.admit(
            RolloutRequest(
                rollout_id=f"r{i}",
                initial_messages=list(row["prompt"]),
                label=row["answer"],
                chat_completions_url=fake_server.base_url,
            )
        )
        for i, row in enumerate(env.get_eval_dataset())
    ]
    for rec in records:
        await rec.task
    assert [rec.result.sample.reward for rec in records] == [1.0, 1.0, 1.0], [
        rec.result for rec in records
    ]
    assert len(_children()) == 1  # one server for every rollout the server ran, still up
    await backend.shutdown()
    assert _children() == []


def test_vf_lite_serve_behind_remote_executor(
    fake_server: FakeServerProcess, tmp_path: Path
) -> None:
    port = free_port()
    serve = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "verifiers_lite.cli",
            "serve",
            "mcp_calculator",
            "--port",
            str(port),
            "--env-args",
            json.dumps({"num_examples": 3}),
        ],
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:

        def healthy() -> bool:
            assert serve.poll() is None, serve.stderr.read().decode() if serve.stderr else ""
            try:
                return urllib.request.urlopen(url + "/health", timeout=1).status == 200
            except OSError:
                return False

        wait_until(healthy, "vf-lite serve answers /health", 60)
        env = vf.load_environment("mcp_calculator", num_examples=3)
        out = env.evaluate_sync(
            vf.ChatClient(fake_server.base_url),
            "fake-tool",
            rollouts_per_example=2,
            executor=vf.executors.RemoteExecutor(url),
        )
        assert [r["reward"] for r in out.rows] == [1.0] * 6
        assert [r["answer"] for r in out.rows] == [
            _hand(r["prompt"][-1]["content"]) for r in out.rows
        ]
        assert len(server_processes(cwd=str(tmp_path))) == 1  # the served environment's one server
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(60)
        if serve.stderr:
            serve.stderr.close()
    assert server_processes(cwd=str(tmp_path)) == []
