"""Runs are labelled by what differs between them, the system prompt, the few-shot turns, the
rubric and re-scoring included, in ``vf.compare_runs``, ``vf.compare`` and ``vf-lite compare``
(the viewer's Compare page: tests/ui/viewer/test_browser_trust.py). Real runs of a scripted model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import verifiers_lite as vf

QUESTIONS = [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(5)]
FEW_SHOT = [{"role": "user", "content": "What is 1 + 1?"}, {"role": "assistant", "content": "2"}]


def right(completion, answer) -> float:
    return float((completion[-1]["content"] or "").strip() == answer)


def short(completion) -> float:
    return float(len(completion[-1]["content"] or "") < 3)


def _run(
    path: Path | None, *, system: str | None = None, few_shot=None, rubric: vf.Rubric | None = None
):
    env = vf.SingleTurnEnv(
        dataset=QUESTIONS,
        system_prompt=system,
        few_shot=few_shot,
        rubric=rubric or vf.Rubric([right]),
        env_id="add-one",
    )
    reply = vf.ScriptedClient(lambda messages: str(int(messages[-1]["content"].split()[2]) + 1))
    return env.evaluate_sync(
        reply,
        "scripted",
        rollouts_per_example=2,
        progress=False,
        results_path=str(path) if path else None,
    )


def test_runs_differing_only_by_system_prompt_are_named_by_it(tmp_path):
    a = _run(tmp_path / "plain")
    b = _run(tmp_path / "briefly", system="Answer with the number only, nothing else.")
    c = vf.compare_runs(a, b)
    assert c.labels == ("no system prompt", 'system "Answer with the number…"')
    assert c.shared == 5  # a system prompt change is paired over the same examples
    assert str(c).splitlines()[0].startswith('system "Answer with the number…" − no system prompt')
    assert list(vf.compare([a, b])["run"]) == [
        "no system prompt",
        'system "Answer with the number…"',
    ]
    # Two prompts that open alike are told apart by a short hash of each.
    twin = _run(None, system="Answer with the number only, please.")
    labels = vf.compare_runs(b, twin).labels
    assert (
        labels[0].startswith("system #")
        and labels[1].startswith("system #")
        and labels[0] != labels[1]
    )


def test_few_shot_rubric_and_rescoring_name_the_runs(tmp_path):
    base = _run(tmp_path / "base")
    shots = _run(None, few_shot=FEW_SHOT)
    c = vf.compare_runs(base, shots)
    assert (
        c.labels == ("no few-shot", "few-shot 2 msgs") and c.shared == 5
    )  # the same questions, paired
    weighted = _run(None, rubric=vf.Rubric([right, short], weights=[1.0, 0.5]))
    assert vf.compare_runs(base, weighted).labels == ("rubric right", "rubric right, short×0.5")
    fixed = vf.rescore(tmp_path / "base", vf.Rubric([short]))
    assert vf.compare_runs(base, fixed).labels == (
        "original, rubric right",
        "rescored, rubric short",
    )
    same_rubric = vf.rescore(tmp_path / "base", vf.Rubric([right]), results_path=tmp_path / "again")
    assert vf.compare_runs(tmp_path / "base", same_rubric).labels == ("original", "rescored")
    assert list(vf.compare([base, same_rubric])["run"]) == ["original", "rescored"]


def test_labels_given_by_hand_win(tmp_path):
    a, b = _run(tmp_path / "a"), _run(tmp_path / "b", system="Be brief.")
    assert vf.compare_runs(a, b, labels=("before", "after")).labels == ("before", "after")
    assert list(vf.compare({"before": a, "after": b})["run"]) == ["before", "after"]


def test_vf_lite_compare_names_the_system_prompt(tmp_path):
    _run(tmp_path / "plain")
    _run(tmp_path / "briefly", system="Answer with the number only.")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "verifiers_lite.cli",
            "compare",
            str(tmp_path / "plain"),
            str(tmp_path / "briefly"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(
        'system "Answer with the number…" − no system prompt: paired over 5'
    ), proc.stdout
    assert lines[1].startswith("run a                 no system prompt  ")
    assert lines[3].startswith('run b                 system "Answer with the number…"  ')


@pytest.mark.parametrize("metadata_only", [True, False])
def test_a_run_without_a_recorded_template_is_named_by_its_first_system_message(
    tmp_path, metadata_only
):
    a, b = _run(None), _run(None, system="Think first.")
    for out in (a, b):
        out.metadata.pop("prompt_template")  # a run saved before templates were recorded
    if not metadata_only:
        a, b = a.save(tmp_path / "a"), b.save(tmp_path / "b")
    assert vf.compare_runs(a, b).labels == ("no system prompt", 'system "Think first."')


def test_an_environment_argument_that_sets_the_system_prompt_is_named_once():
    default = vf.load_environment("arithmetic", num_examples=4)
    brief = vf.load_environment(
        "arithmetic", num_examples=4, system_prompt="Answer with the number only."
    )
    runs = [
        env.evaluate_sync(vf.ScriptedClient("= 3"), "scripted", progress=False)
        for env in (default, brief)
    ]
    assert vf.compare_runs(*runs).labels == (
        'system "Solve the arithmetic problem…"',
        'system "Answer with the number…"',
    )
