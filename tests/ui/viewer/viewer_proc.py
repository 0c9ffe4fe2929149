"""``vf-lite view`` as a real subprocess on 127.0.0.1, for the API and browser tests."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from typing import Any

START_TIMEOUT = 60.0


class ViewerProcess:
    """Start ``vf-lite view PATHS --port 0 --no-browser [ARGS]``; ``url`` is the printed URL."""

    def __init__(self, *paths: str, args: tuple[str, ...] = ()) -> None:
        self.cmd = [
            sys.executable,
            "-m",
            "verifiers_lite.cli",
            "view",
            *paths,
            "--port",
            "0",
            "--no-browser",
            *args,
        ]
        self.url = ""
        self.lines: list[str] = []
        self.proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> ViewerProcess:
        self.proc = subprocess.Popen(
            self.cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert self.proc is not None and self.proc.stdout is not None
            for line in self.proc.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            self.lines.append(line)
            if "serving at " in line:
                self.url = line.split("serving at ", 1)[1].split()[0]
                return self
        self.__exit__()
        raise RuntimeError(f"vf-lite view did not start: {''.join(self.lines)[-2000:]}")

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    @property
    def base(self) -> str:
        """The server root without the token query."""
        return self.url.split("?", 1)[0].rstrip("/")

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        """GET ``path`` (already URL-encoded); returns (status, parsed JSON or text)."""
        req = urllib.request.Request(self.base + path, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                status, body = resp.status, resp.read().decode()
        except urllib.error.HTTPError as err:
            status, body = err.code, err.read().decode()
        try:
            return status, json.loads(body)
        except ValueError:
            return status, body

    def json(self, path: str) -> Any:
        status, body = self.get(path)
        assert status == 200, (path, status, body)
        return body
