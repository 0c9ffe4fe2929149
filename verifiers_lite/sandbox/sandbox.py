"""``Sandbox``: run untrusted code with limits, from async code, on a pool of reused workers."""

from __future__ import annotations

import asyncio
import atexit
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from verifiers_lite.sandbox.launch import launch_spec, process_limit_enforced, resolve_isolation
from verifiers_lite.sandbox.limits import ExecResult, SandboxLimits
from verifiers_lite.sandbox.process import SandboxProcess, SandboxProcessError, SandboxTimeout

_LIVE: weakref.WeakSet[Sandbox] = weakref.WeakSet()


def _close_all() -> None:
    for sandbox in list(_LIVE):
        sandbox.close()


atexit.register(_close_all)


def _kill_idle(idle: list[SandboxProcess], threads: ThreadPoolExecutor) -> None:
    while idle:
        idle.pop().kill()
    threads.shutdown(wait=False)


def _result(answer: dict[str, Any], isolation: str) -> ExecResult:
    if "error" in answer and "exit_code" not in answer:
        return ExecResult(error=str(answer["error"]), isolation=isolation)
    keys = ExecResult.__slots__  # type: ignore[attr-defined]
    return ExecResult(**{k: v for k, v in answer.items() if k in keys}, isolation=isolation)


class Sandbox:
    """Runs Python code in isolation: ``await sandbox.run(code)`` -> :class:`ExecResult`.

    Each run gets a fresh process and an empty private working directory, the limits of
    ``limits`` (wall clock, CPU, memory, processes, file size, output size), no network and no
    view of the home directory or the project (bubblewrap). Runs are served by up to
    ``pool_size`` reused sandbox workers (``reuse=False``: a new sandbox per run). ``isolation``:
    ``"auto"`` (bubblewrap, else the rlimit-only fallback with a loud warning),
    ``"bubblewrap"`` (fail if unavailable) or ``"rlimits"``.

    Args:
        limits: what each run may use (default :class:`SandboxLimits`).
        pool_size: sandbox workers reused across runs, at most.
        reuse: reuse workers (False: a new sandbox per run).
        isolation: ``auto``, ``bubblewrap`` or ``rlimits`` (above).
    """

    def __init__(
        self,
        limits: SandboxLimits | None = None,
        *,
        pool_size: int = 4,
        reuse: bool = True,
        isolation: str = "auto",
    ) -> None:
        if not isinstance(pool_size, int) or pool_size < 1:
            raise ValueError(f"pool_size must be a positive integer, got {pool_size!r}")
        self.limits = limits or SandboxLimits()
        self.pool_size = pool_size
        self.reuse = reuse
        self.requested_isolation = isolation
        self._mode, self._bwrap = resolve_isolation(isolation)
        self.isolation = "bubblewrap" if self._mode.startswith("bubblewrap") else "rlimits"
        self.process_limit_enforced = process_limit_enforced(self._mode)
        self._idle: list[SandboxProcess] = []
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(pool_size)
        # Own threads: the blocking protocol must not queue behind other to_thread users. Runs
        # wait for a pool slot inside their thread; sessions (one per rollout in flight) need
        # threads of their own, so there are plenty (idle threads cost little).
        self._threads = ThreadPoolExecutor(
            max_workers=pool_size + 128, thread_name_prefix="vf-sandbox"
        )
        self._sessions: weakref.WeakSet[SandboxSession] = weakref.WeakSet()
        self._closed = False
        self.started = 0
        _LIVE.add(self)
        # A sandbox dropped without close() still kills its idle workers (the finalizer holds the
        # list, not the sandbox).
        weakref.finalize(self, _kill_idle, self._idle, self._threads)

    async def run(
        self,
        code: str,
        *,
        stdin: str = "",
        files: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> ExecResult:
        """Run ``code`` as a fresh ``__main__`` with ``stdin`` and ``files`` (name -> text) in
        its working directory; ``timeout`` replaces the wall-clock limit for this run. Never
        raises for what the code does; see ``ExecResult``."""
        if not isinstance(code, str):
            raise TypeError(f"code must be a string, got {type(code).__name__}")
        if files is not None and not all(
            isinstance(k, str) and isinstance(v, str) for k, v in files.items()
        ):
            raise TypeError("files must map file names to text")
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        if self._closed:
            raise RuntimeError("this Sandbox is closed")
        job = {"code": code, "stdin": stdin, "files": files or {}, **self.limits.job(timeout)}
        return await asyncio.get_running_loop().run_in_executor(
            self._threads, self._run_blocking, job
        )

    def run_sync(
        self,
        code: str,
        *,
        stdin: str = "",
        files: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> ExecResult:
        """Blocking twin of :meth:`run` (scripts and notebook cells)."""
        from verifiers_lite._util.sync import run_sync

        return run_sync(self.run(code, stdin=stdin, files=files, timeout=timeout))

    def _run_blocking(self, job: dict[str, Any]) -> ExecResult:
        with self._slots:
            try:
                worker = self._checkout()
            except (SandboxProcessError, OSError) as exc:
                return ExecResult(error=f"sandbox failed to start: {exc}", isolation=self.isolation)
            try:
                answer = worker.request(job, job["timeout"])
            except SandboxProcessError as exc:
                worker.kill()
                return ExecResult(error=str(exc), isolation=self.isolation)
            if self.reuse and worker.alive and not self._closed:
                with self._lock:
                    self._idle.append(worker)
            else:
                worker.kill()
            return _result(answer, self.isolation)

    def _spawn(self, mode: str) -> SandboxProcess:
        with self._lock:
            self.started += 1
        return SandboxProcess(launch_spec(mode, self.limits, self._mode, self._bwrap))

    def _checkout(self) -> SandboxProcess:
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive:
                    return worker
                worker.kill()
        return self._spawn("exec")

    def session(self) -> SandboxSession:
        """A persistent interpreter in its own sandbox: variables survive between runs."""
        session = SandboxSession(self)
        self._sessions.add(session)
        return session

    def close(self) -> None:
        """Kill every worker and session of this sandbox."""
        self._closed = True
        with self._lock:
            idle = list(self._idle)
            self._idle.clear()  # the same list object the finalizer holds
        for worker in idle:
            worker.kill()
        for session in list(self._sessions):
            session.close()
        self._threads.shutdown(wait=False)

    async def aclose(self) -> None:
        self.close()

    async def __aenter__(self) -> Sandbox:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Sandbox(isolation={self.isolation!r}, pool_size={self.pool_size}, limits={self.limits})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its settings (an environment shipped to a Ray worker or a rollout server):
        # the copy starts its own workers there.
        return (_rebuild, (self.limits, self.pool_size, self.reuse, self.requested_isolation))


def _rebuild(limits: SandboxLimits, pool_size: int, reuse: bool, isolation: str) -> Sandbox:
    return Sandbox(limits, pool_size=pool_size, reuse=reuse, isolation=isolation)


class SandboxSession:
    """One persistent interpreter (a REPL in a sandbox); see :meth:`Sandbox.session`.

    Each :meth:`run` executes a cell in the same namespace and prints the value of a final bare
    expression. A cell that outlives the time limit kills the session: the next run starts a
    fresh interpreter and its result says the earlier state is gone.

    Args:
        sandbox: the sandbox whose limits and isolation the interpreter runs under.
    """

    def __init__(self, sandbox: Sandbox) -> None:
        self._sandbox = sandbox
        self._proc: SandboxProcess | None = None
        self._lost = False
        self._lock = threading.Lock()
        self.closed = False

    async def run(self, code: str, *, timeout: float | None = None) -> ExecResult:
        """Execute ``code`` in the session's namespace."""
        if not isinstance(code, str):
            raise TypeError(f"code must be a string, got {type(code).__name__}")
        if self.closed:
            raise RuntimeError("this session is closed")
        job = {"code": code, **self._sandbox.limits.job(timeout)}
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._sandbox._threads, self._run_blocking, job)

    def run_sync(self, code: str, *, timeout: float | None = None) -> ExecResult:
        """Blocking twin of :meth:`run`."""
        from verifiers_lite._util.sync import run_sync

        return run_sync(self.run(code, timeout=timeout))

    def _run_blocking(self, job: dict[str, Any]) -> ExecResult:
        with self._lock:
            isolation = self._sandbox.isolation
            note = ""
            if self._proc is None or not self._proc.alive:
                if self._proc is not None or self._lost:
                    note = "[the previous interpreter was killed; earlier variables are gone]\n"
                try:
                    self._proc = self._sandbox._spawn("session")
                except (SandboxProcessError, OSError) as exc:
                    return ExecResult(error=f"sandbox failed to start: {exc}", isolation=isolation)
                self._lost = False
            try:
                answer = self._proc.request(job, job["timeout"], grace_s=0.25)
            except SandboxProcessError as exc:
                # The wall-clock limit (or a crash): the whole interpreter goes, its processes with it.
                self._proc.kill()
                self._proc, self._lost = None, True
                if isinstance(exc, SandboxTimeout):
                    return ExecResult(
                        timed_out=True,
                        duration_s=float(job["timeout"]),
                        isolation=isolation,
                        stderr=note,
                        exit_code=-9,
                    )
                return ExecResult(error=str(exc), isolation=isolation, stderr=note)
            result = _result(answer, isolation)
            result.stdout = note + result.stdout if note else result.stdout
            return result

    def close(self) -> None:
        """Kill the interpreter."""
        self.closed = True
        if self._proc is not None:
            self._proc.kill()
            self._proc = None

    async def aclose(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.close)
