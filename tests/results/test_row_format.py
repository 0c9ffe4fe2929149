"""The rows on disk keep their shape: a results.jsonl written by the previous version is read as it
was, and rows written now are plain JSON with the keys rows had before (and that Row declares)."""

from __future__ import annotations

import json
from pathlib import Path

import verifiers_lite as vf
from verifiers_lite.core import records

# Lines as the previous version wrote them: one example's two rollouts in one write (tagged with
# the write's id and size), then a row of an older file (one write per row: no tags, no
# input_hash, attempts, seed or finish_reasons).
OLD_LINES = [
    {
        "example_id": 0,
        "rollout_index": 0,
        "trajectory_id": "a666",
        "task": "default",
        "prompt": [{"role": "user", "content": "2+2?"}],
        "completion": [{"role": "assistant", "content": "4"}],
        "answer": "4",
        "info": {},
        "reward": 1.0,
        "metrics": {"exact": 1.0},
        "advantage": 0.5,
        "turns": 1,
        "stop_reason": "stop",
        "error": None,
        "timing": {
            "start": 1796103240.44,
            "generation_ms": 0.04,
            "scoring_ms": 0.13,
            "rollout_ms": 0.1,
            "total_ms": 0.48,
        },
        "usage": {"prompt_tokens": 7, "completion_tokens": 1},
        "seed": 1680354807,
        "finish_reasons": ["stop"],
        "endpoint": "endpoint-0",
        "input_hash": "7523c6ee996bb1c7",
        "attempts": 1,
        "_write_id": "8331",
        "_write_size": 2,
    },
    {
        "example_id": 0,
        "rollout_index": 1,
        "trajectory_id": "9ebc",
        "task": "default",
        "prompt": [{"role": "user", "content": "2+2?"}],
        "completion": [],
        "answer": "4",
        "info": {},
        "reward": None,
        "metrics": {},
        "advantage": None,
        "turns": 0,
        "stop_reason": "error",
        "error": {"category": "model_timeout", "message": "ModelAPIError: no answer within 30s"},
        "timing": {
            "start": 1796103240.45,
            "generation_ms": 0.0,
            "scoring_ms": 0.0,
            "rollout_ms": 0.0,
            "total_ms": 0.1,
        },
        "usage": {"prompt_tokens": 0, "completion_tokens": 0},
        "seed": 1274933906,
        "endpoint": "endpoint-0",
        "input_hash": "7523c6ee996bb1c7",
        "attempts": 2,
        "_write_id": "8331",
        "_write_size": 2,
    },
    {
        "example_id": 1,
        "rollout_index": 0,
        "trajectory_id": "ae9c",
        "task": "default",
        "prompt": [{"role": "user", "content": "3+3?"}],
        "completion": [{"role": "assistant", "content": "5"}],
        "answer": "6",
        "info": {"level": 2},
        "reward": 0.0,
        "metrics": {"exact": 0.0},
        "advantage": 0.0,
        "turns": 1,
        "stop_reason": "stop",
        "error": None,
        "timing": {"generation_ms": 0.01, "scoring_ms": 3.19, "rollout_ms": 0.03, "total_ms": 3.53},
        "usage": {"prompt_tokens": 7, "completion_tokens": 1},
    },
]

# The keys of a row the previous version wrote for a single-turn run with a results_path.
KEYS_BEFORE = {
    "example_id",
    "rollout_index",
    "trajectory_id",
    "task",
    "prompt",
    "completion",
    "answer",
    "info",
    "reward",
    "metrics",
    "advantage",
    "turns",
    "stop_reason",
    "error",
    "timing",
    "usage",
    "seed",
    "trajectory",  # was finish_reasons: each model call now kept (request, usage, times)
    "endpoint",
    "input_hash",
    "attempts",
    "_write_id",
    "_write_size",
    "session",  # added since: the session that made the row
    "cost_usd",  # added since: what its model calls cost (None: unpriced)
}
WRITE_TAGS = {"_write_id", "_write_size"}


def _exact(completion, answer) -> float:
    return float(completion[-1]["content"] == answer) if completion else 0.0


def _old_run(directory: Path) -> Path:
    directory.mkdir()
    (directory / "metadata.json").write_text(json.dumps({"model": "m", "rollouts_per_example": 2}))
    (directory / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in OLD_LINES))
    return directory


def test_a_results_file_of_the_previous_version_reads_as_written(tmp_path):
    out = vf.load_results(_old_run(tmp_path / "old"))
    expected = [{k: v for k, v in row.items() if k not in WRITE_TAGS} for row in OLD_LINES]
    assert [dict(r) for r in out.rows] == expected
    # Computed by hand from the literal rows: two scored rollouts (1.0, 0.0), one timeout.
    assert out.rewards == [1.0, 0.0]
    assert out.summary["num_rollouts"] == 3 and out.summary["errors"] == {"model_timeout": 1}
    df = out.to_pandas()
    assert df["error_category"].tolist()[1] == "model_timeout" and df["prompt_tokens"].tolist() == [
        7,
        0,
        7,
    ]


def test_a_results_file_of_the_previous_version_can_be_rescored(tmp_path):
    rubric = vf.Rubric([_exact])
    out = vf.rescore(_old_run(tmp_path / "old"), rubric, results_path=tmp_path / "new")
    by_id = {r["trajectory_id"]: r for r in out.rows}
    assert (
        by_id["a666"]["reward"] == 1.0 and by_id["ae9c"]["reward"] == 0.0
    )  # "4" == "4"; "5" != "6"
    assert by_id["9ebc"]["error"] == OLD_LINES[1]["error"]  # the timeout stays what it was
    assert by_id["ae9c"]["info"] == {"level": 2}


def test_rows_written_now_are_plain_json_with_the_keys_of_before(tmp_path):
    env = vf.SingleTurnEnv(
        dataset=[{"question": "2+2?", "answer": "4"}, {"question": "3+3?", "answer": "6"}],
        rubric=vf.Rubric([_exact]),
    )
    env.evaluate_sync(
        vf.ScriptedClient(["4", "5"]),
        "m",
        rollouts_per_example=2,
        results_path=tmp_path,
        progress=False,
    )
    lines = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(lines) == 4
    for row in lines:
        assert set(row) == KEYS_BEFORE, set(row) ^ KEYS_BEFORE
        assert set(row) - WRITE_TAGS <= set(records.Row.__annotations__)
        assert set(row["timing"]) == set(records.Timing.__annotations__)
        # the answer is the completion's (not stored twice); a scripted client names no model
        for step in row["trajectory"]:
            assert set(step) == set(records.TrajectoryStep.__annotations__) - {
                "message",
                "model",
                "tool_calls",
                "env",
                "tokens",
            }
        # reasoning and cached tokens, and a provider's own fields, only when the server
        # reports them
        assert set(row["usage"]) == set(records.Usage.__annotations__) - {
            "reasoning_tokens",
            "cached_prompt_tokens",
            "extra",
        }
        assert row["reward"] == _exact(row["completion"], row["answer"])


def test_error_rows_written_now_carry_the_typed_error(tmp_path):
    class Broken(vf.SingleTurnEnv):
        async def rollout(self, input, client, model, sampling_args=None):
            raise RuntimeError("boom")

    env = Broken(dataset=[{"question": "q", "answer": "a"}], max_retries=0)
    env.evaluate_sync(vf.ScriptedClient("x"), "m", results_path=tmp_path, progress=False)
    (row,) = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    # on disk the traceback is its key; its text is in tracebacks.jsonl, once per run
    assert {k: v for k, v in row["error"].items() if k != "traceback_id"} == {
        "category": "env_error",
        "message": "RuntimeError: boom",
    }
    assert set(row["error"]) | {"traceback"} == set(records.ErrorRecord.__annotations__)
    assert row["error"]["category"] in records.ERROR_CATEGORIES and row["stop_reason"] == "error"
