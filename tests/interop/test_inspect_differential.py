"""The differential test: inspect tasks written for this repository, run by inspect_ai itself
(its own venv, .ci/install_inspect_oracle.sh) and by this library against the same
deterministic conversation model on 127.0.0.1, give per sample and epoch the same scores
(value, answer and explanation of every scorer) and the same messages."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

import verifiers_lite as vf
from tests.interop.inspect_runner import TASKS, run_inspect
from verifiers_lite.testing.conversation_model import MODEL
from verifiers_lite.testing.conversation_server import ConversationServerProcess

inspect_log = pytest.importorskip("inspect_ai.log", reason="needs the inspect extra")

# solvers: system_message, prompt_template, user_message, chain_of_thought, generate,
# multiple_choice, self_critique, use_tools; scorers: match, includes, exact, pattern, answer,
# choice, f1, model_graded_qa, model_graded_fact; datasets: Sample lists, csv_dataset with a
# FieldSpec, json_dataset with record_to_sample; epochs.
SPECS = [
    "arithmetic.py@sums",
    "arithmetic.py@products",
    "records.py@csv_sums",
    "records.py@json_reverse",
    "choices.py@mcq",
    "tools.py@adder",
    "graded.py@graded_qa",
    "graded.py@critiqued",
]


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, vf.GenerateOutputs]]:
    """Per task: inspect_ai's log and this library's run, against one conversation server."""
    out = tmp_path_factory.mktemp("differential")
    with ConversationServerProcess() as server:
        logs = run_inspect([str(TASKS / s) for s in SPECS], server.base_url, MODEL, out)
        runs = {}
        for spec in SPECS:
            env = vf.load_environment(f"inspect:{TASKS / spec}")
            runs[spec] = env.evaluate_sync(
                vf.ChatClient(base_url=server.base_url),
                MODEL,
                num_examples=-1,
                rollouts_per_example=env.epochs,
                max_concurrent=4,
            )
    by_task = {inspect_log.read_eval_log(str(p)).eval.task: p for p in logs}
    return {s: (inspect_log.read_eval_log(str(by_task[s.split("@")[1]])), runs[s]) for s in SPECS}


def _canon(score: dict[str, Any]) -> str:
    value = score.get("value")
    if isinstance(value, float) and math.isnan(value):
        value = "nan"
    return json.dumps([value, score.get("answer"), score.get("explanation")], sort_keys=True)


@pytest.mark.parametrize("spec", SPECS)
def test_inspect_and_verifiers_lite_give_the_same_scores(both, spec: str) -> None:
    log, run = both[spec]
    assert log.status == "success"
    theirs = {
        (s.id, s.epoch): {n: _canon(v.model_dump(mode="json")) for n, v in s.scores.items()}
        for s in log.samples
    }
    ours = {
        (r["env_state"]["inspect"]["id"], r["rollout_index"] + 1): {
            n: _canon(v) for n, v in r["env_state"]["inspect"]["scores"].items()
        }
        for r in run.rows
    }
    assert not [r for r in run.rows if r["error"]], [r["error"] for r in run.rows]
    assert ours == theirs
    msgs = {(s.id, s.epoch): [(m.role, m.text) for m in s.messages] for s in log.samples}
    for r in run.rows:
        key = (r["env_state"]["inspect"]["id"], r["rollout_index"] + 1)
        mine = [(m["role"], _text(m.get("content"))) for m in r["prompt"] + r["completion"]]
        assert mine == msgs[key], spec


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content)
    return content or ""


def test_the_scores_vary(both) -> None:
    """A differential over constant scores would prove little: the model is right and wrong."""
    values = {
        json.dumps(v["value"])
        for _, run in both.values()
        for r in run.rows
        for v in r["env_state"]["inspect"]["scores"].values()
    }
    assert {'"C"', '"I"'} <= values


@pytest.mark.parametrize("spec", ["arithmetic.py@sums", "records.py@csv_sums", "choices.py@mcq"])
def test_an_inspect_log_and_a_verifiers_lite_run_pair_by_sample(both, spec: str) -> None:
    """Paired over every sample, inputs checked equal; the same model on both sides: no difference."""
    log, run = both[spec]
    c = vf.compare_runs(log.location, run, labels=("inspect", "verifiers_lite"))
    assert c.shared == len({s.id for s in log.samples})
    assert c.diff == 0.0 and not c.only_a and not c.only_b
