#!/usr/bin/env bash
# Run the training tests (TransformersSampler, TRL's GRPOTrainer on the library's rollouts) in
# .venv-vllm, which has torch, transformers and trl.
set -euo pipefail
cd "$(dirname "$0")/.."
# One torch thread: on a shared, busy machine two OpenMP threads spin against each other (a
# forward pass measured 10x slower than with one). Override on a quiet machine.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export TRL_EXPERIMENTAL_SILENCE=1
exec .venv-vllm/bin/python -m pytest tests/rollout tests/train -m train -q -p no:cacheprovider "$@"
