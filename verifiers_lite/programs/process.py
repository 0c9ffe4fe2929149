"""One program run as a process group: started, watched, its output capped, always killed.

The program starts in a session of its own (its process group is its pid), so everything it
forks can be killed at once. The group is killed when the program ends (stragglers it left), when
a limit stops it (SIGTERM, then SIGKILL after ``kill_grace`` seconds; a program stopped for a
refused call first has ``kill_grace`` seconds to end by itself, as it may on the error it got),
when the rollout is
cancelled (SIGKILL), and when the driver itself dies: the program's direct process gets SIGKILL
from the kernel (``PR_SET_PDEATHSIG``) and a watchdog process (:mod:`.watchdog`) kills every group
still registered once the driver's end of its pipe closes, even after ``kill -9``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifiers_lite.programs.watchdog import SOURCE

__all__ = ["ProgramResult", "group_alive", "run_program"]

_READ = 1 << 16
_STDERR_TAIL = 8192
_PR_SET_PDEATHSIG = 1


@dataclass
class ProgramResult:
    """What a finished program left: its exit code (negative: the signal that ended it), its
    stdout (the first ``max_output_bytes``, then a note of what was cut), its stderr's tail, why
    the rollout stopped it (None: it ended by itself) and how long it ran."""

    exit_code: int | None
    stdout: str
    stderr_tail: str
    stdout_cut: int
    stopped: str | None
    seconds: float


def _child_setup() -> None:  # pragma: no cover - runs in the child between fork and exec
    # The kernel kills the program if the driver dies, even by SIGKILL.
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class _Watchdog:
    """The driver's one watchdog process: told each group started and ended; kills those left
    when the driver goes away (its stdin closes)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None

    def _pipe(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", SOURCE],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C at the terminal must not stop it first
            )
        return self._proc

    def tell(self, line: str) -> None:
        with self._lock:
            proc = self._pipe()
            assert proc.stdin is not None
            try:
                proc.stdin.write(line.encode() + b"\n")
                proc.stdin.flush()
            except (BrokenPipeError, OSError):
                self._proc = None


_WATCHDOG = _Watchdog()


def group_alive(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group ``pgid``, read from ``/proc``."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            alive.append(int(entry.name))
    return alive


def _kill(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _read_head(stream: asyncio.StreamReader, cap: int, out: bytearray) -> int:
    """Keep the first ``cap`` bytes in ``out``; read (and drop) the rest; return bytes dropped."""
    dropped = 0
    while chunk := await stream.read(_READ):
        room = cap - len(out)
        if room > 0:
            out += chunk[:room]
        dropped += max(0, len(chunk) - max(room, 0))
    return dropped


async def _read_tail(stream: asyncio.StreamReader, out: bytearray) -> None:
    while chunk := await stream.read(_READ):
        out += chunk
        if len(out) > 2 * _STDERR_TAIL:
            del out[: len(out) - _STDERR_TAIL]


async def run_program(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: bytes | None,
    timeout: float | None,
    stop: asyncio.Future[str],
    max_output_bytes: int,
    kill_grace: float,
) -> ProgramResult:
    """Run ``argv`` in ``cwd`` until it exits, ``timeout`` passes (stopped: ``"time_limit"``) or
    ``stop`` gets a reason; the whole process group is dead when this returns or raises."""
    t0 = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=str(cwd),
        env=dict(env),
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_child_setup,
    )
    pgid = proc.pid
    _WATCHDOG.tell(f"+{pgid}")
    out, err = bytearray(), bytearray()
    assert proc.stdout is not None and proc.stderr is not None
    readers = [
        asyncio.ensure_future(_read_head(proc.stdout, max_output_bytes, out)),
        asyncio.ensure_future(_read_tail(proc.stderr, err)),
    ]
    stopped: str | None = None
    try:
        if stdin is not None:
            asyncio.ensure_future(_feed(proc, stdin))
        stopped = await _wait(proc, stop, timeout)
        if stopped is not None:
            await _terminate(proc, pgid, kill_grace, polite=stopped != "time_limit")
    except BaseException:
        _kill(pgid, signal.SIGKILL)
        for r in readers:
            r.cancel()
        raise
    finally:
        _kill(pgid, signal.SIGKILL)  # what the program left running
        _WATCHDOG.tell(f"-{pgid}")
    # A grandchild that left the group may hold the pipes open: read what came, then give up.
    done, pending = await asyncio.wait(readers, timeout=2.0)
    for r in pending:
        r.cancel()
    dropped = int(readers[0].result() or 0) if readers[0] in done else 0
    text = out.decode("utf-8", "replace")
    if dropped:
        text += f"\n[output cut: {dropped} bytes beyond the {max_output_bytes}-byte cap]"
    return ProgramResult(
        proc.returncode,
        text,
        bytes(err[-_STDERR_TAIL:]).decode("utf-8", "replace"),
        dropped,
        stopped,
        time.monotonic() - t0,
    )


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
        proc.stdin.close()


async def _wait(
    proc: asyncio.subprocess.Process, stop: asyncio.Future[str], timeout: float | None
) -> str | None:
    """None when the program exits by itself; else why it must be stopped."""
    exited: asyncio.Future[Any] = asyncio.ensure_future(proc.wait())
    waiting: set[asyncio.Future[Any]] = {exited, stop}
    try:
        done, _ = await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not exited.done():
            exited.cancel()
    if exited in done and not (stop.done() and not stop.cancelled()):
        return None
    if stop.done() and not stop.cancelled():
        return stop.result()
    return "time_limit"


async def _terminate(
    proc: asyncio.subprocess.Process, pgid: int, grace: float, *, polite: bool
) -> None:
    """SIGTERM to the group, SIGKILL ``grace`` seconds later; ``polite``: the program first has
    ``grace`` seconds to end by itself."""
    if polite:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), grace)
        if proc.returncode is not None:
            return
    _kill(pgid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), grace)
    _kill(pgid, signal.SIGKILL)
    await proc.wait()
