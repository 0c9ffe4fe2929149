"""A run loaded from its directory behaves as the run in hand: rows in example order, and
``out.rescore(rubric)`` returning new results without writing a directory (unless asked)."""

from __future__ import annotations

import asyncio

import verifiers_lite as vf
from verifiers_lite.results.store import read_rows


async def _late_for_low_examples(messages) -> str:
    """Answers the questions of low examples last, so groups finish (and are written) in reverse."""
    n = int(messages[-1]["content"].split()[1])
    await asyncio.sleep(0.02 * (6 - n))
    return str(n)


def _run(tmp_path):
    env = vf.SingleTurnEnv(
        dataset=[{"question": f"question {i}", "answer": str(i % 2)} for i in range(6)],
        rubric=vf.Rubric([lambda completion, answer: float(completion[-1]["content"] == answer)]),
        env_id="reverse",
    )
    return env.evaluate_sync(
        vf.ScriptedClient(_late_for_low_examples),
        "scripted",
        rollouts_per_example=2,
        results_path=str(tmp_path / "run"),
        progress=False,
    )


def test_a_loaded_run_reads_in_example_order_as_the_run_in_hand(tmp_path):
    first = _run(tmp_path)
    on_disk = [
        (r["example_id"], r["rollout_index"]) for r in read_rows(tmp_path / "run" / "results.jsonl")
    ]
    assert on_disk != sorted(on_disk)  # the file holds groups as they finished
    loaded = vf.load_results(tmp_path / "run")
    order = [(r["example_id"], r["rollout_index"]) for r in loaded.rows]
    assert order == sorted(on_disk) == [(r["example_id"], r["rollout_index"]) for r in first.rows]
    df = loaded.to_pandas()
    assert list(zip(df["example_id"], df["rollout_index"], strict=True)) == sorted(on_disk)


def test_rescoring_a_loaded_run_returns_results_and_writes_nothing(tmp_path):
    _run(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    old = vf.load_results(tmp_path / "run")
    always = vf.Rubric([lambda completion: 1.0])
    for _ in range(2):  # a second call is no FileExistsError: nothing was written the first time
        new = old.rescore(always)
        assert [r["reward"] for r in new.rows] == [1.0] * 12 and not new.lazy
        assert (
            "results_path" not in new.metadata
        )  # in memory: the source directory holds the old scores
        assert new.metadata["rescored_from"]["path"] == str((tmp_path / "run").resolve())
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    saved = old.rescore(always, results_path=tmp_path / "fixed")  # written when asked
    assert saved.lazy and (tmp_path / "fixed" / "results.jsonl").exists()
    assert [r["reward"] for r in read_rows(tmp_path / "fixed" / "results.jsonl")] == [1.0] * 12
