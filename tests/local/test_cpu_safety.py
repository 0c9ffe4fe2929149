"""CPU safety of the embedded llama.cpp runtime: policy, exit descriptions, and the real
in-process path with extra buffer types off (what keeps a native AMX build from crashing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verifiers_lite.local import cpu_safety as cs

AMX_CPUINFO = (
    "processor\t: 0\nflags\t\t: fpu sse2 avx2 fma f16c avx512f amx_bf16 amx_tile amx_int8\n"
)
EPYC_CPUINFO = "processor\t: 0\nflags\t\t: fpu sse2 avx2 fma f16c\n"
ARM_CPUINFO = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\n"


def test_cpu_flags_and_amx_detection():
    assert cs.cpu_has_amx(cs.cpu_flags(AMX_CPUINFO))
    assert not cs.cpu_has_amx(cs.cpu_flags(EPYC_CPUINFO))
    assert "asimd" in cs.cpu_flags(ARM_CPUINFO) and not cs.cpu_has_amx(cs.cpu_flags(ARM_CPUINFO))


def test_extra_buffers_off_exactly_for_amx_builds_unless_forced():
    amx_build = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | REPACK = 1 |"
    portable = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | REPACK = 1 |"
    assert not cs.extra_buffers_allowed(amx_build, "auto")
    assert cs.extra_buffers_allowed(portable, "auto")
    assert not cs.extra_buffers_allowed(portable, "0")
    assert cs.extra_buffers_allowed(amx_build, "1")
    with pytest.raises(ValueError, match="VF_LLAMA_EXTRA_BUFFERS"):
        cs.extra_buffers_allowed(portable, "maybe")


def test_exit_descriptions_and_fix_hints():
    assert cs.describe_exit(-11) == "killed by signal 11 (SIGSEGV)"
    assert cs.describe_exit(3) == "exited with code 3"
    assert "out of memory" in cs.crash_hint(-9, set())


AMX_BUILD = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | REPACK = 1 |"
PORTABLE_BUILD = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | REPACK = 1 |"


def test_reinstall_advice_only_for_a_build_with_amx_kernels():
    on_amx_cpu = cs.crash_hint(-11, cs.cpu_flags(AMX_CPUINFO), build_info=AMX_BUILD)
    assert "this CPU has AMX" in on_amx_cpu and "GGML_NATIVE=OFF" in on_amx_cpu
    assert "install_llama_cpp.sh" in on_amx_cpu
    elsewhere = cs.crash_hint(-4, cs.cpu_flags(EPYC_CPUINFO), build_info=AMX_BUILD)
    assert "another CPU" in elsewhere and "GGML_NATIVE=OFF" in elsewhere
    # The portable build crashed (e.g. a SIGSEGV sent from outside): no claim about AMX, no reinstall.
    for flags in (AMX_CPUINFO, EPYC_CPUINFO):
        neutral = cs.crash_hint(-11, cs.cpu_flags(flags), build_info=PORTABLE_BUILD)
        assert "no AMX kernels" in neutral and "this CPU has AMX" not in neutral
        assert "reinstall" not in neutral and "GGML_NATIVE" not in neutral


def test_a_build_that_cannot_be_asked_gets_a_conditional_hint(monkeypatch):
    monkeypatch.setattr(cs, "installed_build_info", lambda: None)
    hint = cs.crash_hint(-11, cs.cpu_flags(AMX_CPUINFO))
    assert "if yours was built with -march=native" in hint and "this CPU has AMX" not in hint


def test_the_installed_build_answers_for_itself():
    """Without build_info, the hint asks the installed llama-cpp-python what it was built with."""
    pytest.importorskip("llama_cpp")
    info = cs.installed_build_info()
    assert info is not None and "AVX" in info
    hint = cs.crash_hint(-11)
    assert ("GGML_NATIVE=OFF" in hint) == cs.build_has_amx(info)


def test_installed_build_is_portable():
    """The build scripts/setup.sh installs has no -march=native kernels (no AMX, no AVX-512):
    the same binary runs on every x86-64 CPU with AVX2."""
    stamp = Path(sys.prefix) / ".llama_cpp_build"
    if not stamp.exists():
        pytest.skip("llama-cpp-python was not installed by scripts/install_llama_cpp.sh")
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
    assert "AMX_INT8 = 1" not in info and "AVX512 = 1" not in info, info


_GREEDY = r"""
import json, sys
from verifiers_lite.local.cpu_safety import apply_to_llama_cpp
from verifiers_lite.local.models import smollm2_gguf_path
allowed = apply_to_llama_cpp(sys.argv[1])
import llama_cpp
llm = llama_cpp.Llama(model_path=str(smollm2_gguf_path()), n_ctx=256, n_threads=1, verbose=False, seed=0)
out = llm.create_chat_completion([{"role": "user", "content": "What is 2+3?"}], max_tokens=12, temperature=0)
print(json.dumps({"allowed": allowed, "use_extra_bufts": bool(llm.model_params.use_extra_bufts),
                  "text": out["choices"][0]["message"]["content"]}))
"""


@pytest.mark.local_model
@pytest.mark.slow
def test_in_process_llama_with_extra_buffers_off_decodes_like_the_default():
    """The defence for a native AMX build, run for real on this CPU: with extra buffer types
    forced off, a real greedy completion is the same text as with the default parameters."""
    pytest.importorskip("llama_cpp")

    def run(setting: str) -> dict:
        proc = subprocess.run(
            [sys.executable, "-c", _GREEDY, setting], capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    off, on = run("0"), run("1")
    assert off["allowed"] is False and off["use_extra_bufts"] is False
    assert on["allowed"] is True and on["use_extra_bufts"] is True
    assert off["text"] and off["text"] == on["text"]


def test_embedded_model_present_where_the_suite_requires_it():
    """scripts/test.sh sets VF_REQUIRE_LOCAL_MODEL=1: there, the real-model tests must run, not
    skip because llama.cpp or the GGUF went missing from the install."""
    if os.environ.get("VF_REQUIRE_LOCAL_MODEL") != "1":
        pytest.skip("VF_REQUIRE_LOCAL_MODEL is not set (scripts/test.sh sets it)")
    import llama_cpp  # noqa: F401

    from verifiers_lite.local.models import smollm2_gguf_path

    assert smollm2_gguf_path().stat().st_size > 50_000_000
