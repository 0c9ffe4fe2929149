#!/usr/bin/env bash
# The main job: set up, then evaluate a bundled environment and print the results table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/vf-lite eval arithmetic "$@"
