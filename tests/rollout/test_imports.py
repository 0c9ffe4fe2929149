"""The rollout package imports no heavy optional dependency until a backend is used."""

from __future__ import annotations

import subprocess
import sys


def test_rollout_import_is_light() -> None:
    code = (
        "import sys, verifiers_lite.rollout as r, verifiers_lite.envs as e, verifiers_lite.tools.functions\n"
        "r.MultiTurnRollout, e.APIMultiTurnRollout, r.TokenClient, r.build_training_batch, r.ToolManager\n"
        "heavy = [m for m in ('vllm', 'torch', 'ray', 'llama_cpp', 'transformers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_backend_error_names_the_extra(monkeypatch) -> None:
    import builtins

    import pytest

    from verifiers_lite.rollout.samplers import vllm as vllm_mod

    real_import = builtins.__import__

    def fake_import(name, *a, **k):
        if name == "vllm":
            raise ImportError("no vllm")
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r"verifiers_lite\[vllm\]"):
        vllm_mod.VLLMSampler(model="x")


def test_vf_rollout_attribute_is_light() -> None:
    code = (
        "import sys, verifiers_lite as vf\n"
        "assert 'verifiers_lite.rollout' not in sys.modules\n"
        "assert vf.rollout.logprob_report is vf.rollout.logprob_report\n"
        "vf.rollout.VLLMServerSampler, vf.rollout.VLLMServerSampler\n"
        "heavy = [m for m in ('vllm', 'torch', 'llama_cpp', 'transformers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
