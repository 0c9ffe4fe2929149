"""Classic verifiers environments run unchanged under verifiers_lite give the rewards verifiers
0.3.1 itself computes: per example the same number of rollouts, the same rewards and the same
metrics, against one deterministic model, with no ``verifiers`` importable and beside the real
verifiers 0.4 (which must stay what other code in the process imports)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.classic import records
from tests.classic.corpus_specs import SPECS
from tests.classic.harness import CONDITIONS

# Environments verifiers_lite does not run like verifiers 0.3.1 yet, and why (strict: an
# environment that starts to pass must be taken off this list).
KNOWN_GAPS: dict[str, str] = {}

NAMES = sorted(SPECS)


def _reference(oracle: dict[str, Any], name: str) -> list[dict[str, Any]]:
    result = oracle[name]
    assert "failure" not in result, (
        f"verifiers 0.3.1 could not run {name}:\n{result.get('failure')}"
    )
    return result["rollouts"]


@pytest.mark.parametrize("name", NAMES)
def test_reference_run_is_informative(oracle: dict[str, Any], name: str) -> None:
    """The corpus environment runs cleanly under verifiers 0.3.1 and its rewards vary, so a
    framework that scored differently would be seen."""
    rollouts = _reference(oracle, name)
    assert rollouts, f"{name}: no rollouts"
    assert [r["error"] for r in rollouts if r["error"]] == []
    assert len({r["reward"] for r in rollouts}) >= 2, (
        f"{name}: every rollout scored {rollouts[0]['reward']}"
    )
    per_example = {len(v) for v in records.by_example(rollouts).values()}
    assert per_example == {SPECS[name]["rollouts"]}


def _case(condition: str, name: str) -> Any:
    marks = [pytest.mark.xfail(reason=KNOWN_GAPS[name], strict=True)] if name in KNOWN_GAPS else []
    return pytest.param(condition, name, marks=marks, id=f"{condition}-{name}")


@pytest.mark.parametrize(("condition", "name"), [_case(c, n) for c in CONDITIONS for n in NAMES])
def test_same_rewards_as_verifiers(
    oracle: dict[str, Any], lite_runs: Any, condition: str, name: str
) -> None:
    expected = _reference(oracle, name)
    got = lite_runs(condition)[name]
    assert "failure" not in got, f"verifiers_lite could not run {name}:\n{got.get('failure')}"
    diffs = records.differences(expected, got["rollouts"])
    assert diffs == [], f"{name}: {len(diffs)} differences from verifiers 0.3.1:\n" + "\n".join(
        diffs[:12]
    )


@pytest.mark.parametrize("name", ["vf_gsm8k"])
def test_real_verifiers_04_stays_importable(lite_runs: Any, name: str) -> None:
    """Beside verifiers 0.4, code in the same process that imports ``verifiers`` after classic
    environments ran gets the real 0.4 package: its own version and files, no classic names."""
    seen = lite_runs("beside_verifiers_0_4")["_process"]
    assert seen["before"] and ".venv-verifiers04-site" in seen["before"], seen
    after = seen["after"]
    assert after.get("version") == "0.4.0", after
    assert ".venv-verifiers04-site" in str(after.get("file")), after
    assert after.get("has_SingleTurnEnv") == "False", after
