"""The process that runs inside a sandbox (bubblewrap or the rlimit fallback).

Not imported by the package: its source is handed to a bare interpreter (``python -I -c``), so
it depends on the standard library only and never sees the project's files. It speaks one JSON
object per line over its original stdin/stdout, which it moves to private descriptors first.

Modes (``argv[1]`` is a JSON config):
- ``exec``: each request runs in a fresh forked process, in a fresh working directory, with its
  own CPU/memory/file-size limits and wall-clock deadline; afterwards everything it started is
  killed and its directory removed. The worker serves many requests (pooling).
- ``session``: one persistent namespace; each request is a cell executed in it (state kept
  between cells, the value of a last bare expression printed as in a REPL). The host enforces
  the wall-clock limit by killing the whole sandbox.
- ``probe``: prints ``ok`` once set up (used to check that the sandbox starts).
"""

import ast
import contextlib
import json
import os
import resource
import select
import shutil
import signal
import sys
import time
import traceback

CONFIG = json.loads(sys.argv[1])
PROTO_IN = os.dup(0)
PROTO_OUT = os.dup(1)
_null = os.open(os.devnull, os.O_RDWR)
for _fd in (0, 1, 2):
    os.dup2(_null, _fd)
ROOT = CONFIG["root"]
_libc = None
WORKER_PID = 0


def _limit(kind, value):
    if value:
        resource.setrlimit(kind, (int(value), int(value)))


def _setup():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.makedirs(ROOT, mode=0o700, exist_ok=True)
    if CONFIG.get("uid") is not None:
        # Leave root for a dedicated uid: the process-count limit counts that uid's processes,
        # and all capabilities are dropped with it.
        uid = int(CONFIG["uid"])
        os.chown(ROOT, uid, uid)
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    nproc = CONFIG.get("nproc")
    if nproc and CONFIG.get("nproc_existing"):
        # Without a uid of its own the limit counts all of this user's processes: allow the
        # ones already running, plus the sandbox's share.
        nproc += _count_own_processes()
    if os.geteuid() == 0 and CONFIG.get("uid") is None:
        # Root that cannot leave root (a root-only interpreter, no namespaces) at least gives up
        # its capabilities; the kernel still exempts uid 0 from the process-count limit.
        _drop_capabilities()
    _limit(resource.RLIMIT_NPROC, nproc)
    # Not dumpable: code run for a request (same uid) can then neither ptrace this worker nor open
    # its /proc/<pid>/fd entries to forge answers on the protocol pipe.
    parent = os.getppid()
    try:
        import ctypes

        global _libc
        libc = _libc = ctypes.CDLL(None)
        libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
        # Die with the process that started us (set after the uid change, which clears it).
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (ImportError, OSError, AttributeError):
        pass  # without ctypes/prctl: a root-started worker is non-dumpable after setresuid anyway
    if os.getppid() != parent:
        os._exit(1)  # the parent died before the death signal was armed
    os.chdir(ROOT)


def _count_own_processes():
    uid, count = str(os.getuid()), 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/status") as f:
                    if f.read().split("Uid:", 1)[1].split()[0] == uid:
                        count += 1
            except (OSError, IndexError):
                pass
    return count


def _drop_capabilities():
    """Stay uid 0 (to read a root-only Python) but give up every capability, for good."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: no setuid binary gives them back
    for cap in range(64):
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP: nor does exec (root's file caps)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [
            ("effective", ctypes.c_uint32),
            ("permitted", ctypes.c_uint32),
            ("inheritable", ctypes.c_uint32),
        ]

    header, data = Header(0x20080522, 0), (Data * 2)()  # _LINUX_CAPABILITY_VERSION_3, all zero
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed: cannot drop capabilities")


def _send(obj):
    data = (json.dumps(obj) + "\n").encode()
    while data:
        data = data[os.write(PROTO_OUT, data) :]


def _requests():
    buf = b""
    while True:
        while b"\n" not in buf:
            chunk = os.read(PROTO_IN, 1 << 16)
            if not chunk:
                return
            buf += chunk
        line, buf = buf.split(b"\n", 1)
        yield json.loads(line)


def _read_capped(path, cap):
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            data = f.read(cap)
    except OSError:
        return "", False
    return data.decode("utf-8", "replace"), size > cap


def _write_files(directory, files):
    for name, text in (files or {}).items():
        path = os.path.normpath(os.path.join(directory, name))
        if not path.startswith(directory + os.sep):
            raise ValueError(f"file name escapes the working directory: {name!r}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


def _kill_rest(pgid):
    """Kill everything the request started (escaped sessions too where that is safe)."""
    if CONFIG.get("kill_all"):
        # Inside the pid namespace (or as the dedicated uid) -1 reaches exactly the sandbox's
        # other processes, whatever process group they moved to.
        with contextlib.suppress(OSError):
            os.kill(-1, signal.SIGKILL)
    else:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
    if CONFIG.get("kill_all"):
        _wait_gone(time.monotonic() + 2.0)


def _wait_gone(deadline):
    """Until the killed processes are gone (SIGKILL is delivered asynchronously), so that when a
    request is answered nothing it started still runs."""
    me, uid = os.getpid(), os.getuid()
    while time.monotonic() < deadline:
        alive = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in (me, 1):
                continue
            try:
                with open(f"/proc/{entry}/status") as f:
                    status = f.read()
            except OSError:
                continue
            if (
                f"Uid:\t{uid}\t" in status
                and "State:\tZ" not in status
                and "State:\tX" not in status
            ):
                alive = True
                break
        if not alive:
            return
        time.sleep(0.002)


def _scrub():
    """Remove everything a request left in the worker's directory (its own run directory and
    whatever it wrote beside it) and, in a private /dev, in /dev/shm: the next request starts clean."""
    places = [ROOT] + (["/dev/shm"] if CONFIG.get("private_dev") else [])
    for place in places:
        try:
            entries = os.listdir(place)
        except OSError:
            continue
        for entry in entries:
            path = os.path.join(place, entry)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(path)


def _print_user_traceback(exc):
    """The traceback from the user's code down, without the worker's own frame."""
    tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
    traceback.print_exception(type(exc), exc, tb)


def _child(job, workdir, out_path, err_path):
    os.close(PROTO_IN)
    os.close(PROTO_OUT)
    if _libc is not None:
        _libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # dies with the worker (PR_SET_PDEATHSIG)
    if os.getppid() != WORKER_PID:
        os._exit(1)  # the worker died before the death signal was armed
    os.setsid()
    stdin_path = os.path.join(os.path.dirname(out_path), "stdin")
    with open(stdin_path, "w") as f:
        f.write(job.get("stdin") or "")
    os.dup2(os.open(stdin_path, os.O_RDONLY), 0)
    os.dup2(os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
    os.dup2(os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process ends with the request
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    os.chdir(workdir)
    cpu = int(job["cpu"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    _limit(resource.RLIMIT_AS, job.get("memory"))
    _limit(resource.RLIMIT_FSIZE, job.get("fsize"))
    rc = 0
    try:
        sys.argv = ["main.py"]
        exec(
            compile(job["code"], "main.py", "exec"),
            {"__name__": "__main__", "__builtins__": __builtins__},
        )
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int) and exc.code is not None:
            print(exc.code, file=sys.stderr)
    except BaseException as exc:
        _print_user_traceback(exc)
        rc = 1
    _flush_std_streams()
    os._exit(rc & 0xFF)


def _wait(pid, timeout):
    """Wait for ``pid`` until ``timeout``; returns (wait status, rusage, timed_out)."""
    deadline = time.monotonic() + timeout
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            if pidfd is not None:
                os.close(pidfd)
            return status, usage, True
        if pidfd is not None:
            select.select([pidfd], [], [], left)
        else:
            time.sleep(min(left, 0.005))
    if pidfd is not None:
        os.close(pidfd)
    return status, usage, False


def _run_exec(job, n):
    base = os.path.join(ROOT, f"run{n}")
    workdir = os.path.join(base, "work")
    os.makedirs(workdir, mode=0o700)
    out_path, err_path = os.path.join(base, "stdout"), os.path.join(base, "stderr")
    t0 = time.monotonic()
    try:
        _write_files(workdir, job.get("files"))
    except (OSError, ValueError) as exc:
        shutil.rmtree(base, ignore_errors=True)
        return {"error": f"could not write files: {exc}"}
    pid = os.fork()
    if pid == 0:
        try:
            _child(job, workdir, out_path, err_path)
        finally:
            os._exit(111)
    status, usage, timed_out = _wait(pid, float(job["timeout"]))
    duration = time.monotonic() - t0
    _kill_rest(pid)
    cap = int(job["max_output"])
    stdout, out_trunc = _read_capped(out_path, cap)
    stderr, err_trunc = _read_capped(err_path, cap)
    _scrub()
    code = os.waitstatus_to_exitcode(status)
    return {
        "stdout": stdout,
        "stderr": stderr,
        "exit_code": code,
        "timed_out": timed_out,
        "duration_s": duration,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "stdout_truncated": out_trunc,
        "stderr_truncated": err_trunc,
    }


def _run_cell(job, namespace, n):
    """Execute one cell in ``namespace``; stdout/stderr go to files read back afterwards."""
    out_path, err_path = os.path.join(ROOT, f".out{n}"), os.path.join(ROOT, f".err{n}")
    used = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    soft = int(used + float(job["cpu"])) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard < 0 else min(soft, hard), hard))
    os.dup2(os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
    os.dup2(os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
    t0 = time.monotonic()
    rc = 0
    try:
        tree = ast.parse(job["code"], "<cell>", "exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, "<cell>", "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace)
            if value is not None:
                print(repr(value))
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 0
    except BaseException as exc:
        _print_user_traceback(exc)
        rc = 1
    _flush_std_streams()
    duration = time.monotonic() - t0
    os.dup2(_null, 1)
    os.dup2(_null, 2)
    cap = int(job["max_output"])
    stdout, out_trunc = _read_capped(out_path, cap)
    stderr, err_trunc = _read_capped(err_path, cap)
    for path in (out_path, err_path):
        with contextlib.suppress(OSError):
            os.unlink(path)
    return {
        "stdout": stdout,
        "stderr": stderr,
        "exit_code": rc & 0xFF,
        "timed_out": False,
        "duration_s": duration,
        "cpu_s": sum(resource.getrusage(resource.RUSAGE_SELF)[:2]) - used,
        "stdout_truncated": out_trunc,
        "stderr_truncated": err_trunc,
    }


def main():
    global WORKER_PID
    _setup()
    WORKER_PID = os.getpid()
    mode = CONFIG["mode"]
    if mode == "probe":
        _send({"ok": True, "uid": os.getuid(), "pid": os.getpid()})
        return
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    if mode == "session":
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        _limit(resource.RLIMIT_AS, CONFIG.get("memory"))
        _limit(resource.RLIMIT_FSIZE, CONFIG.get("fsize"))
        os.makedirs(os.path.join(ROOT, "work"), exist_ok=True)
        os.chdir(os.path.join(ROOT, "work"))
    _send({"ready": True})
    for n, job in enumerate(_requests()):
        try:
            result = _run_cell(job, namespace, n) if mode == "session" else _run_exec(job, n)
        except Exception as exc:  # a broken request must not take the worker down
            result = {"error": f"{type(exc).__name__}: {exc}"}
        _send(result)


def _flush_std_streams() -> None:
    """Flush what the user's code printed; a stream it broke or closed must not fail the run."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()


main()
