"""Keep llama.cpp off code paths that crash on some CPUs, and explain crashes that happen anyway.

A llama-cpp-python compiled with ``-march=native`` on a CPU with AMX (Intel Sapphire Rapids and
later) loads weights into llama.cpp's AMX "extra buffer" and segfaults on the first decode.
Turning extra buffer types off (``use_extra_bufts = False``) avoids that path at no cost to the
embedded Q4_1 model (its weights are not repacked anyway). The project's own install is built
portable and never takes that path; this is the defence for a user's own native build.
"""

from __future__ import annotations

import functools
import os
import signal
from pathlib import Path
from typing import Any

# "auto" (default): off exactly when the llama.cpp build has AMX kernels; "0"/"1" force it.
EXTRA_BUFFERS_ENV = "VF_LLAMA_EXTRA_BUFFERS"

PORTABLE_REINSTALL = (
    "reinstall llama-cpp-python built portable: `bash scripts/install_llama_cpp.sh .venv` in a "
    'verifiers_lite checkout, or CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON '
    '-DGGML_FMA=ON -DGGML_F16C=ON" pip install --force-reinstall --no-cache-dir '
    "'llama-cpp-python[server]==0.3.36'"
)


def cpu_flags(cpuinfo: str | None = None) -> set[str]:
    """The CPU feature flags of this machine (``/proc/cpuinfo``; empty where unreadable)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return set()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


def cpu_has_amx(flags: set[str] | None = None) -> bool:
    """True on CPUs with Intel AMX (``amx_int8``/``amx_tile``/``amx_bf16``)."""
    return any(f.startswith("amx") for f in (cpu_flags() if flags is None else flags))


def build_has_amx(system_info: str) -> bool:
    """True when llama.cpp's ``llama_print_system_info()`` reports AMX kernels compiled in."""
    return "AMX_INT8 = 1" in system_info


def extra_buffers_allowed(system_info: str, setting: str | None = None) -> bool:
    """Whether llama.cpp may use extra buffer types: ``setting`` ("0", "1", "auto"; default the
    ``VF_LLAMA_EXTRA_BUFFERS`` variable) decides, "auto" allows them unless the build has AMX."""
    value = (
        (setting if setting is not None else os.environ.get(EXTRA_BUFFERS_ENV, "auto"))
        .strip()
        .lower()
    )
    if value in ("0", "off", "false", "no"):
        return False
    if value in ("1", "on", "true", "yes"):
        return True
    if value not in ("", "auto"):
        raise ValueError(f"{EXTRA_BUFFERS_ENV} must be 0, 1 or auto, got {value!r}")
    return not build_has_amx(system_info)


def apply_to_llama_cpp(setting: str | None = None) -> bool:
    """Make every ``llama_cpp.Llama`` built in this process follow :func:`extra_buffers_allowed`.

    llama-cpp-python has no keyword for it, so its default model params are wrapped (the
    ``Llama`` constructor reads them through the module attribute at call time). Idempotent;
    returns whether extra buffers stay allowed.
    """
    import llama_cpp.llama_cpp as lib

    info = lib.llama_print_system_info().decode(errors="replace")
    allowed = extra_buffers_allowed(info, setting)
    original: Any = getattr(
        lib.llama_model_default_params, "__wrapped_default__", lib.llama_model_default_params
    )
    if allowed:
        lib.llama_model_default_params = original
        return True
    if "use_extra_bufts" not in {field[0] for field in lib.llama_model_params._fields_}:
        return True  # an older llama.cpp without extra buffer types: nothing to turn off

    def default_params_without_extra_buffers() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    default_params_without_extra_buffers.__wrapped_default__ = original  # type: ignore[attr-defined]
    lib.llama_model_default_params = default_params_without_extra_buffers
    return False


def describe_exit(returncode: int) -> str:
    """``-11`` -> "killed by signal 11 (SIGSEGV)"; ``1`` -> "exited with code 1"."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "unknown signal"
        return f"killed by signal {-returncode} ({name})"
    return f"exited with code {returncode}"


@functools.cache
def installed_build_info() -> str | None:
    """``llama_print_system_info()`` of the installed llama-cpp-python (the kernels compiled in),
    or None when it cannot be loaded here."""
    try:
        import llama_cpp.llama_cpp as lib

        return str(lib.llama_print_system_info().decode(errors="replace"))
    except Exception:  # not installed, or a library that does not load: nothing to tell
        return None


def crash_hint(
    returncode: int, flags: set[str] | None = None, build_info: str | None = None
) -> str:
    """What to do about a llama.cpp server that died with ``returncode``.

    The AMX advice (reinstall portable) is given only when the build has AMX kernels
    (``build_info``: ``llama_print_system_info()``; default the installed build's): a portable
    build that crashed, say from a signal sent by another process, gets a neutral hint.
    """
    if returncode in (-signal.SIGSEGV, -signal.SIGILL, -signal.SIGBUS, 139, 132):
        info = installed_build_info() if build_info is None else build_info
        if info is None:
            return (
                "a llama-cpp-python built for another CPU (or a llama.cpp bug) crashes this way; "
                f"if yours was built with -march=native, {PORTABLE_REINSTALL}"
            )
        if build_has_amx(info):
            cause = (
                "this CPU has AMX, and the installed llama-cpp-python has AMX kernels (a -march=native "
                "build), which crash on it"
                if cpu_has_amx(flags)
                else "the installed llama-cpp-python was built for another CPU (-march=native, with AMX kernels)"
            )
            return f"{cause}; {PORTABLE_REINSTALL}"
        return (
            "the installed llama-cpp-python has no AMX kernels (a portable build), so this is not the "
            "AMX crash a native build has: the server was killed from outside, or llama.cpp failed on "
            "this model or input; see the server output"
        )
    if returncode in (-signal.SIGKILL, 137):
        return "the process was killed (out of memory?): try a smaller n_ctx or fewer --parallel servers"
    return "see the server output above"
