#!/usr/bin/env bash
# Create .venv and install verifiers_lite with everything the main job and the tests need.
# Idempotent: a second run only checks that everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
# llama-cpp-python compiles from source (~6-10 min on 2 cores) the first time; pip caches the wheel.
.venv/bin/python -m pip install -q -e ".[dev,envs,notebook,server,ray]"
echo "setup: .venv ready ($(.venv/bin/python --version))"
