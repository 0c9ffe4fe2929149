"""The classic-environment differential tests' shared runs: one deterministic model, one
verifiers 0.3.1 pass (cached), one verifiers_lite pass per condition, each over the corpus
environments this session selected (``-k vf_gsm8k`` runs one)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.classic import harness
from verifiers_lite.testing.conversation_server import ConversationServerProcess

collect_ignore_glob = ["corpus/*"]  # the corpus modules are environments, not tests


def _selected(session: pytest.Session) -> list[str]:
    """The corpus environments this session's classic tests ask for; other folders' tests may
    take a parameter called ``name`` too, so only items under this folder count."""
    here = Path(__file__).parent
    names = {
        item.callspec.params["name"]
        for item in session.items
        if hasattr(item, "callspec")
        and "name" in item.callspec.params
        and Path(item.path).is_relative_to(here)
    }
    return sorted(names)


def _require(path: Path, what: str) -> None:
    if path.exists():
        return
    message = f"{what} is not built ({path}); run: bash .ci/install_verifiers_oracle.sh"
    if os.environ.get("VF_REQUIRE_CLASSIC_ORACLE") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def conversation_model():
    with ConversationServerProcess() as server:
        yield server


@pytest.fixture(scope="session")
def oracle(
    request: pytest.FixtureRequest,
    conversation_model: ConversationServerProcess,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Any]:
    _require(harness.ORACLE_PYTHON, "the verifiers 0.3.1 reference venv")
    return harness.oracle_results(
        _selected(request.session), conversation_model.base_url, tmp_path_factory.mktemp("oracle")
    )


@pytest.fixture(scope="session")
def lite_runs(
    request: pytest.FixtureRequest,
    conversation_model: ConversationServerProcess,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, dict[str, Any]]:
    """verifiers_lite's rollouts per condition, each run when first asked for."""
    runs: dict[str, dict[str, Any]] = {}

    def get(condition: str) -> dict[str, Any]:
        if condition not in runs:
            if condition == "beside_verifiers_0_4":
                _require(harness.BESIDE_SITE, "the verifiers 0.4 files")
            runs[condition] = harness.lite_results(
                _selected(request.session),
                conversation_model.base_url,
                tmp_path_factory.mktemp(condition),
                beside_verifiers_04=condition == "beside_verifiers_0_4",
            )
        return runs[condition]

    return get  # type: ignore[return-value]
