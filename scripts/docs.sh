#!/usr/bin/env bash
# The docs site: `scripts/docs.sh build` writes site/ (strict: any warning fails),
# `scripts/docs.sh serve` serves it on http://127.0.0.1:8000 with live reload.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${VF_PYTHON:-.venv/bin/python}
export PYTHONPATH="$PWD:$PWD/environments${PYTHONPATH:+:$PYTHONPATH}"
export NO_MKDOCS_2_WARNING=1
case "${1:-build}" in
  build) "$PY" -m mkdocs build --strict -d site ;;
  serve) "$PY" -m mkdocs serve -a 127.0.0.1:8000 ;;
  *) echo "usage: scripts/docs.sh [build|serve]" >&2; exit 2 ;;
esac
