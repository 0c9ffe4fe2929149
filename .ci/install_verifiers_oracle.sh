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
BESIDE=.venv-verifiers04-site
BESIDE_VERSION=0.4.0

# The Python verifiers_lite's .venv runs on: 3.11-3.13 (verifiers 0.3.1 wants < 3.14).
bash .ci/oracle_venv.sh install_verifiers_oracle .venv-verifiers031 verifiers 0.3.1 aiohttp

if [ -f "$BESIDE/verifiers/__init__.py" ] && grep -q "$BESIDE_VERSION" "$BESIDE"/verifiers-*.dist-info/METADATA 2>/dev/null; then
  echo "install_verifiers_oracle: $BESIDE already has verifiers $BESIDE_VERSION"
else
  rm -rf "$BESIDE"
  python3 -m pip install -q --no-deps --target "$BESIDE" "verifiers==$BESIDE_VERSION"
  echo "install_verifiers_oracle: $BESIDE ready (verifiers $BESIDE_VERSION, no dependencies)"
fi
