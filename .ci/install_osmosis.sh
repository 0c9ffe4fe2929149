#!/usr/bin/env bash
# Create .venv-osmosis: osmosis-ai's released client and server (its `server` extra; Python >= 3.12), for
# the interoperability tests (tests/server/test_osmosis_client.py, tests/remote/test_osmosis_server.py).
# Idempotent. Without a Python >= 3.12 on the machine it prints a note and exits 0 (those tests then
# skip, saying why).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-osmosis
VERSION=0.3.8
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import osmosis_ai, uvicorn, fastapi, importlib.metadata as m, sys; sys.exit(m.version('osmosis-ai') != '$VERSION')" 2>/dev/null; then
  echo "install_osmosis: $VENV already has osmosis-ai $VERSION"; exit 0
fi
# 3.12 where there is one (the version this was checked on), else the newest above it.
if ! PY=$(bash .ci/find_python.sh 3.12 3.12 || bash .ci/find_python.sh 3.12); then
  echo "install_osmosis: no Python >= 3.12 here; the osmosis-ai interoperability tests will skip" >&2
  exit 0
fi
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q "osmosis-ai[server]==$VERSION"
echo "install_osmosis: $VENV ready (osmosis-ai $VERSION, $("$VENV/bin/python" --version))"
