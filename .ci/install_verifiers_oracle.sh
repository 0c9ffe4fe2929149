#!/usr/bin/env bash
# The reference installs for the classic-environment differential tests (tests/classic/):
#   .venv-verifiers031       verifiers 0.3.1 from the registry, in its own venv: the classic API
#                            (under verifiers.legacy, reached as `import verifiers as vf`), the oracle
#                            whose rewards verifiers_lite must reproduce.
#   .venv-verifiers04-site   verifiers 0.4.0's files alone (pip --target, --no-deps): put on a test
#                            subprocess's sys.path for the "beside verifiers 0.4" condition. Its
#                            dependencies would move aiohttp, openai, mcp and uvicorn in .venv, and
#                            its top-level package needs none of them to import.
# Idempotent: each part is kept when it already answers with its version. From cold ~1-2 min.
set -euo pipefail
cd "$(dirname "$0")/.."
ORACLE=.venv-verifiers031
ORACLE_VERSION=0.3.1
BESIDE=.venv-verifiers04-site
BESIDE_VERSION=0.4.0

oracle_ready() {
  [ -x "$ORACLE/bin/python" ] && "$ORACLE/bin/python" -c "
import importlib.metadata as m, sys
sys.exit(m.version('verifiers') != '$ORACLE_VERSION' or m.version('aiohttp') == '')" 2>/dev/null
}

if oracle_ready; then
  echo "install_verifiers_oracle: $ORACLE already has verifiers $ORACLE_VERSION"
else
  # The Python verifiers_lite's .venv runs on: 3.11-3.13 (verifiers 0.3.1 wants < 3.14).
  PY=$(bash .ci/find_python.sh 3.11 3.13) || { echo "install_verifiers_oracle: no Python 3.11-3.13 here" >&2; exit 1; }
  rm -rf "$ORACLE"
  "$PY" -m venv "$ORACLE"
  "$ORACLE/bin/python" -m pip install -q --upgrade pip
  "$ORACLE/bin/python" -m pip install -q "verifiers==$ORACLE_VERSION"
  echo "install_verifiers_oracle: $ORACLE ready (verifiers $ORACLE_VERSION, $("$ORACLE/bin/python" --version))"
fi

if [ -f "$BESIDE/verifiers/__init__.py" ] && grep -q "$BESIDE_VERSION" "$BESIDE"/verifiers-*.dist-info/METADATA 2>/dev/null; then
  echo "install_verifiers_oracle: $BESIDE already has verifiers $BESIDE_VERSION"
else
  rm -rf "$BESIDE"
  python3 -m pip install -q --no-deps --target "$BESIDE" "verifiers==$BESIDE_VERSION"
  echo "install_verifiers_oracle: $BESIDE ready (verifiers $BESIDE_VERSION, no dependencies)"
fi
