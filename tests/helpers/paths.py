"""Where this checkout's files are, for tests that read them or start processes in the checkout."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
NOTEBOOKS = REPO / "notebooks"
# verifiers 0.3.1's reference venv (.ci/install_verifiers_oracle.sh): the classic tests' oracle,
# and an interpreter with the mcp 1.x SDK for the tools tests
ORACLE_PYTHON = REPO / ".venv-verifiers031" / "bin" / "python"
