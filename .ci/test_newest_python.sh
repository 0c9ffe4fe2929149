#!/usr/bin/env bash
# The core (records, run, environments, rubrics, results), sync, notebook and CLI tests on the
# newest Python this machine has, in its own venv (.venv-pyXY, made by scripts/setup.sh; the
# llama.cpp build is cached per Python like the first). Skipped, with a note, when nothing is newer
# than .venv's Python. Extra pytest arguments are passed on.
set -euo pipefail
cd "$(dirname "$0")/.."
DEFAULT=$(.venv/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
NEXT=$(echo "$DEFAULT" | awk -F. '{print $1 "." $2 + 1}')
if ! PY=$(bash .ci/find_python.sh "$NEXT"); then
  echo "test_newest_python: no Python newer than $DEFAULT on this machine; skipped"
  exit 0
fi
TAG=$("$PY" -c 'import sys; print("py%d%d" % sys.version_info[:2])')
VENV=".venv-$TAG"
started=$(date +%s)
PYTHON="$PY" VF_VENV="$VENV" bash scripts/setup.sh
echo "test_newest_python: $VENV set up in $(( $(date +%s) - started )) s"
"$VENV/bin/python" -m pytest -q tests/core tests/run tests/envs tests/rubrics tests/results tests/_util \
  tests/ui/notebook tests/cli "$@"
echo "test_newest_python: $("$VENV/bin/python" --version) done in $(( $(date +%s) - started )) s"
