"""The ledger on its own, without a scheduler: rows appended are stamped, saved and counted;
finishing writes metadata.json with the format version and the summary of the rows on disk; a
second session resumes what was saved; another run's directory is refused untouched."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import verifiers_lite as vf
from verifiers_lite.core.summary import RunSummary
from verifiers_lite.ledger.opening import RunFacts
from verifiers_lite.ledger.run_ledger import RunLedger
from verifiers_lite.results.fingerprint import INPUT_HASH_KEY
from verifiers_lite.results.run_metadata import FORMAT_VERSION
from verifiers_lite.results.store import read_rows

ENV = vf.SingleTurnEnv(
    dataset=[{"question": "2+2", "answer": "4"}, {"question": "3+3", "answer": "6"}],
    rubric=vf.Rubric([lambda completion, answer: float(answer in completion[-1]["content"])]),
)
PRICE = vf.ModelPrice(input=1.0, output=2.0)  # USD per million tokens


def _facts(path: Path, model: str = "m") -> RunFacts:
    return RunFacts(
        model=model,
        sampling_args={},
        rollouts_per_example=2,
        num_examples=2,
        num_rollouts=4,
        independent_scoring=False,
        score_rollouts=True,
        max_concurrent=None,
        seed=None,
        limits=None,
        results_path=str(path),
        task_facts=None,
    )


def _ledger(path: Path, model: str = "m") -> RunLedger:
    return RunLedger(
        ENV, _facts(path, model), vf.ScriptedClient(lambda m: "4"), prices={model: PRICE}
    )


def _group(eid: int, rewards: list[Any]) -> list[Any]:
    return [
        {
            "example_id": eid,
            "rollout_index": i,
            "prompt": [{"role": "user", "content": "q"}],
            "completion": [{"role": "assistant", "content": "a"}],
            "reward": r,
            "metrics": {},
            "stop_reason": "stop",
            "error": None if r is not None else {"category": "model_error", "message": "x"},
            "usage": {"prompt_tokens": 1000, "completion_tokens": 500},
        }
        for i, r in enumerate(rewards)
    ]


def _session(path: Path, groups: dict[int, list[Any]], status: str = "completed") -> RunLedger:
    async def go() -> RunLedger:
        ledger = _ledger(path)
        ledger.open({0: 2, 1: 2}, lambda eid: f"h{eid}", False, True, False)
        ledger.start_live()
        for eid, rewards in groups.items():
            await ledger.append(_group(eid, rewards), f"h{eid}")
        await ledger.finish(status, False, [], {0: 2, 1: 2})
        return ledger

    return asyncio.run(go())


def test_appended_rows_are_stamped_saved_counted_and_summarised(tmp_path: Path) -> None:
    run = tmp_path / "run"
    ledger = _session(run, {0: [1.0, 0.0], 1: [None, 1.0]})
    rows = read_rows(run / "results.jsonl")
    assert [(r["example_id"], r["rollout_index"]) for r in rows] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    for r in rows:
        assert r[INPUT_HASH_KEY] == f"h{r['example_id']}"
        assert r["attempts"] == 1 and r["session"] == 0
        assert r["cost_usd"] == pytest.approx(1000 * 1.0 / 1e6 + 500 * 2.0 / 1e6)
    meta = json.loads((run / "metadata.json").read_text())
    assert meta["format_version"] == FORMAT_VERSION and meta["status"] == "completed"
    expected = RunSummary(ENV.pass_criterion).add_all(rows).summary()
    assert (
        meta["num_rollouts"] == 4
        and meta["num_scored"] == 3
        and meta["errors"] == {"model_error": 1}
    )
    assert meta["reward_mean"] == pytest.approx(2 / 3) == expected["reward_mean"]
    assert ledger.stats.done == 4 and ledger.stats.resumed == 0
    assert [s["rollouts"] for s in meta["sessions"]] == [4]


def test_a_second_session_keeps_what_was_saved_and_reruns_errors(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _session(run, {0: [1.0, 0.0], 1: [None, 1.0]}, status="completed_with_errors")
    # example 1 had an error: its group runs again, as a scheduler would plan it
    ledger = _session(run, {1: [1.0, 1.0]})
    rows = read_rows(run / "results.jsonl")
    assert sorted((r["example_id"], r["rollout_index"], r["attempts"]) for r in rows) == [
        (0, 0, 1),
        (0, 1, 1),
        (1, 0, 2),
        (1, 1, 2),
    ]
    assert ledger.stats.resumed == 2 and ledger.stats.done == 4
    meta = json.loads((run / "metadata.json").read_text())
    assert [s["rollouts"] for s in meta["sessions"]] == [4, 2]
    assert meta["num_scored"] == 4 and meta["reward_mean"] == pytest.approx(0.75)


def test_another_runs_directory_is_refused_before_anything_changes(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _session(run, {0: [1.0, 0.0]})
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    ledger = _ledger(run, model="another-model")
    with pytest.raises(vf.ResumeMismatchError, match="another-model"):
        ledger.open({0: 2, 1: 2}, lambda eid: f"h{eid}", False, True, False)
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before
