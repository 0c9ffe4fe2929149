#!/usr/bin/env bash
# The reference install for the inspect_ai differential tests (tests/interop/inspect/):
#   .venv-inspect   inspect_ai from the registry, in its own venv: the oracle whose scores tasks run
#                   through verifiers_lite must reproduce (it runs the same @task files against the
#                   same local stub model). openai: the provider inspect's openai-api models go through.
# Idempotent: kept when it already answers with its version. From cold ~1-2 min.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/oracle_venv.sh install_inspect_oracle .venv-inspect inspect_ai 0.3.285 openai
