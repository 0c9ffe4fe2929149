"""The classic guide's own classic modules run under verifiers 0.3.1 as they run here.

Each module a Python block of ``docs/guides/classic-verifiers.md`` writes (``(folder /
"name.py").write_text(...)``) is run by verifiers 0.3.1 (its reference venv) and by
verifiers_lite in its default mode, against the classic tests' deterministic model: what
verifiers_lite runs, 0.3.1 runs with the same rewards; what verifiers_lite refuses, 0.3.1
refuses with the same error. So a module copied from the guide behaves as the guide says under
0.3.1 too."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.classic import harness, records
from tests.classic.corpus_specs import SPECS
from tests.docs import doc_blocks
from tests.helpers.paths import DOCS, ORACLE_PYTHON
from verifiers_lite.testing.conversation_server import ConversationServerProcess

GUIDE = DOCS / "guides" / "classic-verifiers.md"


def guide_modules() -> dict[str, str]:
    """Module name -> source, for each ``(folder / "name.py").write_text(SOURCE)`` of the guide."""
    found: dict[str, str] = {}
    for block in doc_blocks.parse(GUIDE).of("run", langs=("python",)):
        for node in ast.walk(ast.parse(block.code)):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "write_text"
                and isinstance(node.func.value, ast.BinOp)
                and isinstance(node.func.value.right, ast.Constant)
                and str(node.func.value.right.value).endswith(".py")
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                continue
            found[str(node.func.value.right.value).removesuffix(".py")] = node.args[0].value
    return found


@pytest.fixture
def guide_specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    if not ORACLE_PYTHON.exists():
        message = f"{ORACLE_PYTHON} is not built; run bash .ci/install_verifiers_oracle.sh"
        if os.environ.get("VF_REQUIRE_CLASSIC_ORACLE") == "1":
            pytest.fail(message)
        pytest.skip(message)
    folder = tmp_path / "guide"
    folder.mkdir()
    specs: dict[str, dict[str, Any]] = {}
    for name, source in guide_modules().items():
        (folder / f"{name}.py").write_text(source)
        specs[name] = {"dir": str(folder), "num_examples": -1, "rollouts": 1, "keep_failure": True}
    (tmp_path / "specs.json").write_text(json.dumps(specs))
    monkeypatch.setenv("VF_CLASSIC_EXTRA_SPECS", str(tmp_path / "specs.json"))  # the runners'
    for name, spec in specs.items():
        monkeypatch.setitem(SPECS, name, spec)  # this process's
    return sorted(specs)


def test_the_guides_classic_modules_run_or_are_refused_alike_under_verifiers_031(
    guide_specs: list[str], tmp_path: Path
) -> None:
    assert {"classic_echo", "classic_older"} <= set(guide_specs)  # what the guide shows
    with ConversationServerProcess() as model:
        oracle = harness.oracle_results(guide_specs, model.base_url, tmp_path / "oracle")
        lite = harness.lite_results(
            guide_specs, model.base_url, tmp_path / "lite", beside_verifiers_04=False
        )
    ran = []
    for name in guide_specs:
        want, got = oracle[name], lite[name]
        if "failure" in got:
            assert "failure" in want, f"{name}: verifiers 0.3.1 ran what verifiers_lite refused"
            error = records.raised_error(want["failure"])
            assert error in got["failure"], f"{name}: 0.3.1 raised {error}\n{got['failure']}"
        else:
            assert "failure" not in want, f"{name}: 0.3.1 refused it:\n{want['failure'][-800:]}"
            assert records.differences(want["rollouts"], got["rollouts"]) == [], name
            ran.append(name)
    assert ran, "no module of the guide runs under verifiers 0.3.1"
