"""One running sandbox process and its line-per-request protocol (blocking; called in threads)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import time
from typing import Any

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.sandbox.launch import LaunchSpec, popen

# Past the request's own deadline, the worker still needs a moment to kill and report.
_GRACE_S = 5.0
_START_TIMEOUT_S = 30.0


class SandboxProcessError(VerifiersError, RuntimeError):
    """The sandbox process died or stopped answering."""


class SandboxTimeout(SandboxProcessError):
    """The sandbox process did not answer before the deadline."""


class SandboxProcess:
    """A started worker: :meth:`request` sends one job and waits for its answer."""

    def __init__(self, spec: LaunchSpec) -> None:
        self.spec = spec
        self.isolation = spec.isolation
        self.requests = 0
        self._buf = b""
        self._proc: subprocess.Popen[bytes] = popen(spec)
        try:
            hello = self._read(time.monotonic() + _START_TIMEOUT_S)
        except SandboxProcessError:
            self.kill()
            raise
        if not hello.get("ready"):
            self.kill()
            raise SandboxProcessError(f"sandbox did not start: {hello}")

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def request(
        self, job: dict[str, Any], wait_s: float, grace_s: float = _GRACE_S
    ) -> dict[str, Any]:
        """Send ``job``; its answer, or :class:`SandboxTimeout` after ``wait_s`` + ``grace_s``."""
        assert self._proc.stdin is not None
        self.requests += 1
        try:
            self._proc.stdin.write((json.dumps(job) + "\n").encode())
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise SandboxProcessError(f"sandbox process gone: {self._tail()}") from exc
        return self._read(time.monotonic() + wait_s + grace_s)

    def _read(self, deadline: float) -> dict[str, Any]:
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxTimeout("sandbox process did not answer in time")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise SandboxProcessError(f"sandbox process exited: {self._tail()}")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            answer = json.loads(line)
        except ValueError as exc:
            raise SandboxProcessError(f"sandbox process answered garbage: {line[:200]!r}") from exc
        if not isinstance(answer, dict):
            raise SandboxProcessError(f"sandbox process answered garbage: {line[:200]!r}")
        return answer

    def _tail(self) -> str:
        if self._proc.poll() is None:
            return "still running"
        err = b""
        if self._proc.stderr is not None:
            with contextlib.suppress(OSError, ValueError):
                err = self._proc.stderr.read(4000) or b""
        return (
            f"exit status {self._proc.returncode}: {err.decode('utf-8', 'replace').strip()[-500:]}"
        )

    def kill(self) -> None:
        """Kill the sandbox and everything in it, reap it, and return once all of it is gone
        (a pid namespace is torn down asynchronously after its first process dies)."""
        inside = _descendants(self._proc.pid) if self._proc.poll() is None else []
        if self._proc.poll() is None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except OSError:
                self._proc.kill()
        for pid in inside:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=10)
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        deadline = time.monotonic() + 5.0
        while any(map(_running, inside)) and time.monotonic() < deadline:
            time.sleep(0.005)
        if self.spec.host_dir:
            shutil.rmtree(self.spec.host_dir, ignore_errors=True)


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (best effort: a process may exit or fork meanwhile)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                children = [int(c) for c in f.read().split()]
        except OSError:
            continue
        for child in children:
            found += [child, *_descendants(child)]
    return found


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")
