"""The one list of columns: the closed sets derived from their types, the row's key order on
disk, and a column added as one entry reaching the row, the DataFrame and the viewer's API."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any, get_args

import pytest

import verifiers_lite as vf
from verifiers_lite.core import columns, records
from verifiers_lite.core.columns import COLUMNS, Column
from verifiers_lite.core.state import State


def test_closed_sets_are_their_types_arguments():
    assert get_args(records.StopReason) == records.STOP_REASONS
    assert records.STOP_REASONS == (
        "stop",
        "length",
        "max_turns",
        "env_done",
        "error",
        "token_limit",
        "turn_limit",
        "time_limit",
        "cost_limit",
        "tool_limit",
    )
    assert get_args(records.ErrorCategory) == records.ERROR_CATEGORIES
    # Written out by hand: the durations of Timing, and the parts the displays name.
    assert records.TIMING_KEYS == (
        "queue_ms",
        "generation_ms",
        "env_ms",
        "rollout_ms",
        "group_wait_ms",
        "scoring_ms",
        "total_ms",
    )
    assert dict(records.TIMING_PARTS) == {
        "queue_ms": "waiting for a request slot",
        "generation_ms": "in the model request",
        "env_ms": "in the environment",
        "group_wait_ms": "waiting for its group",
        "scoring_ms": "scoring",
    }
    assert records.USAGE_KEYS == (
        "prompt_tokens",
        "completion_tokens",
        "reasoning_tokens",
        "cached_prompt_tokens",
    )


def test_row_keys_keep_their_order_on_disk():
    # The order results.jsonl has always had (the viewer's index reads a line from "reward" on).
    assert columns.ROW_KEYS == (
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
        "cost_usd",  # added at the end: what its model calls cost
    )


def test_every_column_reads_a_typed_row_key():
    typed = set(records.Row.__annotations__)
    assert {c.source for c in COLUMNS if c.source is not None} <= typed
    assert len({c.name for c in COLUMNS}) == len(COLUMNS)


def test_bad_column_is_refused_when_declared():
    with pytest.raises(ValueError, match="kind must be one of"):
        Column("cost", "money", "dollars")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs derive="):
        Column("cost", "float", "dollars", written="derived")
    with pytest.raises(ValueError, match="distinct"):
        columns.use((*COLUMNS, Column("reward", "float", "again")))


COST = Column(
    "cost", "float", "dollars the rollout cost", "if_present", sort=True, filter="range", label="$"
)


@pytest.fixture
def with_cost() -> Iterator[None]:
    before = columns.use((*COLUMNS, COST))
    try:
        yield
    finally:
        columns.use(before.columns)


class Priced(vf.SingleTurnEnv):
    """Puts a price on each rollout: a cent per character of its question (known in advance)."""

    async def rollout(self, input, client, model, sampling_args=None) -> State:
        state = await super().rollout(input, client, model, sampling_args)
        state["cost"] = 0.01 * len(state["prompt"][-1]["content"])  # type: ignore[typeddict-unknown-key]
        return state


QUESTIONS = ["a", "bbb", "cc", "dddd"]


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as r:  # noqa: S310 (127.0.0.1)
        return json.loads(r.read())


def test_a_column_added_as_one_entry_reaches_row_frame_and_viewer(with_cost, tmp_path):
    from verifiers_lite.ui.viewer.serve import ViewerServer

    env = Priced(dataset=[{"question": q} for q in QUESTIONS], env_id="priced")
    path = tmp_path / "run"
    out = env.evaluate_sync(
        vf.ScriptedClient(lambda messages: "ok"), "m", progress=False, results_path=str(path)
    )
    by_hand = {i: round(0.01 * len(q), 6) for i, q in enumerate(QUESTIONS)}
    assert {r["example_id"]: round(r["cost"], 6) for r in out.rows} == by_hand  # type: ignore[typeddict-item]
    assert all(
        "cost" not in (r.get("env_state") or {}) for r in out.rows
    )  # a column, not env state
    df = out.to_pandas()
    assert dict(zip(df["example_id"], df["cost"].round(6), strict=True)) == by_hand

    server = ViewerServer()  # real uvicorn on 127.0.0.1, in this process (it sees the column)
    try:
        (run_id,) = server.registry.add_root(path)
        base = server.url + "api/runs/" + urllib.parse.quote(run_id)
        served = {c["name"]: c for c in _get(base)["columns"]}
        assert served["cost"] == {**COST.describe(), "name": "cost", "label": "$", "sort": True}
        page = _get(base + "/rows?sort=-cost")["rows"]
        assert [r["example_id"] for r in page] == [3, 1, 2, 0]  # dearest first, by hand
        assert [round(r["cost"], 6) for r in page] == [0.04, 0.03, 0.02, 0.01]
        cheap = _get(base + "/rows?max_cost=0.025")["rows"]
        assert sorted(r["example_id"] for r in cheap) == [0, 2]
        with pytest.raises(urllib.error.HTTPError) as bad:
            _get(base + "/rows?min_cost=lots")
        assert bad.value.code == 422
    finally:
        server.stop()
