"""Classic verifiers environments run unchanged under verifiers_lite give the rewards verifiers
0.3.1 itself computes: per example the same number of rollouts, the same rewards and the same
metrics, against one deterministic model, with no ``verifiers`` importable and beside the real
verifiers 0.4 (which must stay what other code in the process imports). What 0.3.1 refuses,
verifiers_lite's default mode refuses with 0.3.1's error; its lenient mode runs it and gives
the rewards 0.3.1 gives for the same environment written for 0.3.1."""

from __future__ import annotations

from typing import Any

import pytest

from tests.classic import records
from tests.classic.corpus_specs import SPECS
from tests.classic.harness import CONDITIONS

# Environments verifiers_lite does not run like verifiers 0.3.1 yet, and why (strict: an
# environment that starts to pass must be taken off this list).
KNOWN_GAPS: dict[str, str] = {}

NAMES = sorted(n for n, spec in SPECS.items() if not spec.get("refused"))
REFUSED = sorted(n for n, spec in SPECS.items() if spec.get("refused"))


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


@pytest.mark.parametrize("name", REFUSED)
def test_refused_with_the_error_of_verifiers(
    oracle: dict[str, Any], lite_runs: Any, name: str
) -> None:
    """The default mode refuses what 0.3.1 refuses, with 0.3.1's exception and message, and a
    note on what verifiers_lite could run instead; before any request where 0.3.1 raised out
    of the run, as an error row on each rollout where the error is the rollout's own."""
    assert "failure" in oracle[name], f"verifiers 0.3.1 ran {name}; the corpus expects a refusal"
    want = records.raised_error(oracle[name]["failure"])
    got = lite_runs("without_verifiers")[name]
    if "failure" in got:
        text = got["failure"]
        assert want in text, (
            f"{name}: 0.3.1 raised\n  {want}\nverifiers_lite raised\n{text[-1500:]}"
        )
    else:
        errors = [r["error"] or "" for r in got["rollouts"]]
        assert errors and all(want in e for e in errors), (want, errors[:2])
        text = errors[0]
    assert "verifiers_lite" in text[text.rindex(want) :], f"{name}: no note\n{text[-800:]}"


# What each lenient run must warn it did that 0.3.1 refuses (the last warning lists them all).
LENIENT_WARNINGS = {
    "vf_lenient_list_dataset": ["a list dataset (0.3.1 takes a datasets.Dataset)"],
    "vf_lenient_string_task": ["string task columns (each the rollout's task name)"],
    "vf_lenient_sync_is_completed": ["is_completed(messages, state) of older classic code"],
    "vf_lenient_state_turn": ["state['turn'] (the model turns so far, as before verifiers 0.2)"],
    "vf_lenient_tuple_env_response": ["env_response returning (messages, state)"],
    "vf_lenient_string_prompt_system": [
        "string prompts with system_prompt (sent as a system and a user message)"
    ],
}


@pytest.mark.parametrize("name", sorted(LENIENT_WARNINGS))
def test_lenient_mode_warns_with_each_deviation(lite_runs: Any, name: str) -> None:
    """Lenient runs (their rewards are compared with 0.3.1's above) warn once per deviation,
    each warning listing the deviations so far."""
    assert SPECS[name].get("lite_mode") == "lenient"
    warned = [w for w in lite_runs("without_verifiers")[name]["warnings"] if "lenient" in w]
    assert len(warned) == len(LENIENT_WARNINGS[name]), warned
    kind, _, text = warned[-1].partition(": ")
    assert kind == "ClassicDeviationWarning"
    assert "runs in lenient classic mode with what verifiers 0.3.1 refuses" in text
    assert text.rpartition("refuses: ")[2].split("; ") == LENIENT_WARNINGS[name]


def test_classic_modules_leave_sys_modules_as_they_found_it(lite_runs: Any) -> None:
    """After each environment ran, its module's name and its helpers' names are bound in
    ``sys.modules`` to what they were before (here: nothing): verifiers_lite's scoped copies
    stay out, so a plain import elsewhere behaves as without verifiers_lite."""
    for condition in CONDITIONS:
        left = lite_runs(condition)["_process"]["left_in_sys_modules"]
        assert left and all(v == [] for v in left.values()), (condition, left)


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
