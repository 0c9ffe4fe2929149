#!/usr/bin/env bash
# The reference install for the inspect_ai differential tests (tests/interop/inspect/):
#   .venv-inspect   inspect_ai from the registry, in its own venv: the oracle whose scores tasks run
#                   through verifiers_lite must reproduce (it runs the same @task files against the
#                   same local stub model).
# Idempotent: kept when it already answers with its version. From cold ~1-2 min.
set -euo pipefail
cd "$(dirname "$0")/.."
ORACLE=.venv-inspect
ORACLE_VERSION=0.3.285

oracle_ready() {
  [ -x "$ORACLE/bin/python" ] && "$ORACLE/bin/python" -c "
import importlib.metadata as m, sys
sys.exit(m.version('inspect_ai') != '$ORACLE_VERSION' or m.version('openai') == '')" 2>/dev/null
}

if oracle_ready; then
  echo "install_inspect_oracle: $ORACLE already has inspect_ai $ORACLE_VERSION"
else
  PY=$(bash .ci/find_python.sh 3.11 3.13) || { echo "install_inspect_oracle: no Python 3.11-3.13 here" >&2; exit 1; }
  rm -rf "$ORACLE"
  "$PY" -m venv "$ORACLE"
  "$ORACLE/bin/python" -m pip install -q --upgrade pip
  # openai: the provider inspect's openai-api/<service>/<model> models go through
  "$ORACLE/bin/python" -m pip install -q "inspect_ai==$ORACLE_VERSION" openai
  echo "install_inspect_oracle: $ORACLE ready (inspect_ai $ORACLE_VERSION, $("$ORACLE/bin/python" --version))"
fi
