"""A loopback test server in a child process: started, waited for, always stopped.

The fake chat server and the conversation model server each run as a ``python -m MODULE --port
N`` child; :class:`ServerProcess` is their shared lifecycle: start the child (in its own session,
so a Ctrl-C or a kernel interrupt of the caller does not kill it), poll ``/health`` until it
answers within a deadline (the child's stderr in the error when it exits first), stop it
(terminate, then kill). The child's side: :func:`serve` (the same uvicorn settings for both) and
:func:`request_body` (the ASGI lifespan answered, a request's body read).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Any, ClassVar, Self


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """A server module run in a child process on 127.0.0.1; a context manager that always stops
    it. A subclass names its module and adds its own arguments (:meth:`child_args`)."""

    module: ClassVar[str]  #: the child's ``python -m`` module (it takes ``--port``)
    name: ClassVar[str]  #: how errors name the server

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def child_args(self) -> list[str]:
        """The child's arguments after ``--port N``."""
        return []

    def start(self, timeout: float = 20.0) -> Self:
        """Start the child and return once ``/health`` answers; RuntimeError when it exits
        first, TimeoutError (the child stopped) when it does not answer within ``timeout``."""
        self.proc = subprocess.Popen(
            [sys.executable, "-m", self.module, "--port", str(self.port), *self.child_args()],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a Ctrl-C / kernel interrupt of the caller must not kill it
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}: {err[-2000:]}")
            try:
                urllib.request.urlopen(f"{self.url}/health", timeout=1).read()
                return self
            except OSError:
                time.sleep(0.05)  # a poll with a deadline: the child binds its port
        self.stop()
        raise TimeoutError(f"{self.name} on port {self.port} not healthy within {timeout}s")

    def request_json(self, path: str, payload: dict[str, Any] | None = None) -> Any:
        """The JSON answer of ``path`` on the server: GET, or POST of ``payload`` when given."""
        data = json.dumps(payload).encode() if payload is not None else None
        req = urllib.request.Request(
            f"{self.url}{path}", data=data, method="POST" if data is not None else "GET"
        )
        return json.loads(urllib.request.urlopen(req, timeout=5).read())

    def stop(self) -> None:
        """Terminate the child (kill it after 5 s) and close its stderr; safe to call twice."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stderr:
            self.proc.stderr.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def serve(app: Any, port: int) -> None:
    """Run an ASGI app on 127.0.0.1:``port`` until the process is stopped (the child's side),
    quiet and with room for a benchmark's thousands of connections."""
    import uvicorn

    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        backlog=4096,
        timeout_keep_alive=60,
    )


async def request_body(scope: dict[str, Any], receive: Any, send: Any) -> bytes | None:
    """A raw ASGI app's request body, read whole; None for the lifespan, answered here (startup,
    then shutdown) until the server stops."""
    if scope["type"] == "lifespan":
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return None
    body = b""
    while True:
        msg = await receive()
        body += msg.get("body", b"")
        if not msg.get("more_body"):
            return body
