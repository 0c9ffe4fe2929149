"""Helpers: real uvicorn server processes on 127.0.0.1, a fault-injecting proxy."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.helpers.paths import REPO
from verifiers_lite.server.protocol import RolloutRequest
from verifiers_lite.testing.fake_server import free_port
from verifiers_lite.testing.waiting import wait_until, wait_until_async

SERVER_TESTS = Path(__file__).parent
# A server process loads the environments it serves by id, that is by module name (``vf-lite serve
# srv_graded_env``): this folder's environment modules are on its path next to the checkout.
SERVER_PYTHONPATH = os.pathsep.join([str(REPO), str(SERVER_TESTS)])


@dataclass
class ServerProc:
    """A scripted rollout server running in a subprocess."""

    url: str
    proc: subprocess.Popen[bytes]
    events_path: Path
    log_path: Path
    headers: dict[str, str] = field(default_factory=dict)

    def events(self) -> list[dict[str, Any]]:
        if not self.events_path.exists():
            return []
        return [json.loads(line) for line in self.events_path.read_text().splitlines() if line]

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def start_server(
    tmp: Path, *, api_key: str | None = None, env: dict[str, str] | None = None, **opts: Any
) -> ServerProc:
    """Start ``scripted_server.py`` under uvicorn and wait for /health."""
    port = free_port()
    tmp.mkdir(parents=True, exist_ok=True)
    events = tmp / f"events-{port}.jsonl"
    args = [
        sys.executable,
        str(SERVER_TESTS / "scripted_server.py"),
        "--port",
        str(port),
        "--events",
        str(events),
    ]
    if api_key:
        args += ["--api-key", api_key]
    for key, value in opts.items():
        args += [f"--{key.replace('_', '-')}", str(value)]
    return _launch(tmp, args, port, events, api_key, env)


def start_serve(
    tmp: Path, *args: str, api_key: str | None = None, env: dict[str, str] | None = None
) -> ServerProc:
    """Start ``vf-lite serve ARGS`` (the real command and LocalBackend) and wait for /health."""
    port = free_port()
    tmp.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "verifiers_lite.cli", "serve", *args, "--port", str(port)]
    if api_key:
        env = {**(env or {}), "SERVE_TEST_KEY": api_key}
        cmd += ["--api-key-env", "SERVE_TEST_KEY"]
    return _launch(tmp, cmd, port, tmp / f"events-{port}.jsonl", api_key, env)


def _launch(
    tmp: Path,
    args: list[str],
    port: int,
    events: Path,
    api_key: str | None,
    extra_env: dict[str, str] | None,
) -> ServerProc:
    log = tmp / f"server-{port}.log"
    env = {**os.environ, "PYTHONPATH": SERVER_PYTHONPATH, **(extra_env or {})}
    with open(log, "wb") as out:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO)
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def healthy() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {log.read_text()}")
        try:
            return httpx.get(url + "/health", headers=headers, timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_until(healthy, "the server answers /health", timeout=30)
    except AssertionError:
        proc.kill()
        raise
    return ServerProc(url, proc, events, log, headers)


def script(**kw: Any) -> dict[str, Any]:
    """Request metadata carrying a ScriptedBackend script."""
    return {"script": kw}


def held_request(rid: str) -> dict[str, Any]:
    """A rollout request body for ``HeldBackend`` (ungraded; its model URL is never called)."""
    return {
        "rollout_id": rid,
        "initial_messages": [{"role": "user", "content": "q"}],
        "chat_completions_url": "http://127.0.0.1:9/v1",
        "grade": False,
    }


class HeldBackend:
    """Each rollout runs until the test releases it; cancellations are recorded."""

    max_admitted: int | None = None
    retry_after_sec = 1.0

    def __init__(self) -> None:
        self.gates: dict[str, asyncio.Event] = {}
        self.tasks: dict[str, asyncio.Task[Any]] = {}
        self.cancelled: set[str] = set()

    async def execute(self, request: RolloutRequest, ctx: Any) -> dict[str, Any]:
        ctx.set_status("running")
        rid = request.rollout_id
        task = asyncio.current_task()
        assert task is not None
        self.tasks[rid] = task
        try:
            await self.gates.setdefault(rid, asyncio.Event()).wait()
        except asyncio.CancelledError:
            self.cancelled.add(rid)
            raise
        return {"completion": [{"role": "assistant", "content": rid}], "metrics": {}}

    def release(self, rid: str) -> None:
        self.gates.setdefault(rid, asyncio.Event()).set()

    def release_all(self) -> None:
        for gate in self.gates.values():
            gate.set()

    async def cancel(self, rollout_id: str) -> None:
        task = self.tasks.get(rollout_id)
        if task is not None:
            task.cancel()

    def health(self) -> dict[str, Any]:
        return {}

    async def shutdown(self) -> None:
        return None


@contextlib.asynccontextmanager
async def serve_in_process(backend: Any, **server_kw: Any) -> AsyncIterator[tuple[Any, str]]:
    """``create_rollout_server(backend, **server_kw)`` on real uvicorn in this event loop (so a
    test can drive its backend): yields the app's RolloutService and the base URL."""
    import uvicorn

    from verifiers_lite.server import create_rollout_server

    app = create_rollout_server(backend, **server_kw)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    serving = asyncio.ensure_future(server.serve())
    try:
        await wait_until_async(lambda: server.started, "the server started", 60)
        yield app.state.rollout_service, f"http://127.0.0.1:{port}"
    finally:
        if isinstance(
            backend, HeldBackend
        ):  # what is still held ends, so shutdown need not drain it
            backend.release_all()
        server.should_exit = True
        await asyncio.wait_for(serving, 60)
