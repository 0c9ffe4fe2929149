"""One definition each: stop reasons, the row's columns, the token merge, the tool answer."""

from __future__ import annotations

import asyncio

import pytest

import verifiers_lite as vf
from verifiers_lite.core import columns, records, state
from verifiers_lite.core.model_client import ChatResponse, TurnUsage
from verifiers_lite.results.flat_rows import flatten_row
from verifiers_lite.results.outputs import GenerateOutputs
from verifiers_lite.rollout import trajectory
from verifiers_lite.rollout.tool_manager import ParsedToolCall, ToolManager
from verifiers_lite.rollout.training import merge_turns


def test_core_and_token_engine_share_one_closed_set_of_stop_reasons():
    assert state.STOP_REASONS is records.STOP_REASONS is trajectory.STOP_REASONS
    limits = ("token_limit", "turn_limit", "time_limit", "cost_limit", "tool_limit")
    natural = ("stop", "length", "max_turns", "env_done", "error")
    assert set(records.STOP_REASONS) == {*natural, *limits}
    assert [records.is_truncated(r) for r in natural] == [False, True, True, False, False]
    assert all(records.is_truncated(r) for r in limits)  # a limit cuts a rollout short
    with pytest.raises(ValueError, match="unknown stop_reason 'api_error'"):
        records.is_truncated("api_error")


def test_dataframe_columns_follow_the_row_schema():
    row = {
        "example_id": 3,
        "rollout_index": 1,
        "trajectory_id": "t",
        "task": "default",
        "prompt": [],
        "completion": [],
        "answer": "a",
        "info": {"k": 1},
        "reward": 1.0,
        "metrics": {"acc": 1.0},
        "advantage": 0.0,
        "turns": 1,
        "stop_reason": "stop",
        "error": {"category": "tool", "message": "boom"},
        "timing": {"generation_ms": 1.0, "scoring_ms": 2.0, "rollout_ms": 1.5, "total_ms": 3.0},
        "usage": {"prompt_tokens": 5, "completion_tokens": 6},
        "cost_usd": 0.5,
    }
    assert set(row) == set(columns.ROW_KEYS)
    flat = flatten_row(row)
    # Written out by hand: the row's scalar columns in order, then the expanded ones.
    assert list(flat) == [
        "example_id",
        "rollout_index",
        "trajectory_id",
        "task",
        "prompt",
        "completion",
        "completion_text",
        "reasoning_text",
        "answer",
        "reward",
        "advantage",
        "turns",
        "stop_reason",
        "error",
        "error_category",
        "attempts",
        "cost_usd",
        "info",
        "acc",
        "queue_ms",
        "generation_ms",
        "env_ms",
        "rollout_ms",
        "group_wait_ms",
        "scoring_ms",
        "total_ms",
        "prompt_tokens",
        "completion_tokens",
        "reasoning_tokens",
        "cached_prompt_tokens",
    ]
    assert (flat["error"], flat["error_category"]) == ("boom", "tool")
    assert GenerateOutputs([]).to_pandas().columns.tolist()[:16] == list(flat)[:16]


def test_token_merge_masks_the_bridge_and_refuses_a_prompt_that_does_not_extend():
    merged = merge_turns([([1, 2], [3, 4], [-0.1, -0.2]), ([1, 2, 3, 4, 9, 9], [5], [-0.5])])
    assert merged == {
        "prompt_ids": [1, 2],
        "completion_ids": [3, 4, 9, 9, 5],
        "completion_mask": [1, 1, 0, 0, 1],
        "completion_logprobs": [-0.1, -0.2, 0.0, 0.0, -0.5],
    }
    assert merge_turns([([1], [2], None), ([1, 2], [3], [-1.0])])["completion_logprobs"] is None
    with pytest.raises(ValueError, match="do not extend"):
        merge_turns([([1, 2], [3], None), ([1, 2, 7], [5], None)])  # turn 1 re-tokenised 3 as 7


class _TwoTurns(vf.MultiTurnEnv):
    async def env_response(self, messages, state):
        return [{"role": "user", "content": "again"}]


def _token_client(second_prompt: list[int]) -> vf.ScriptedClient:
    return vf.ScriptedClient(
        [
            ChatResponse(
                {"role": "assistant", "content": "a"},
                "stop",
                TurnUsage(2, 2),
                [1, 2],
                [3, 4],
                [-0.1, -0.2],
            ),
            ChatResponse(
                {"role": "assistant", "content": "b"},
                "stop",
                TurnUsage(6, 1),
                second_prompt,
                [5],
                None,
            ),
        ]
    )


def test_environment_rows_use_the_same_checked_merge():
    env = _TwoTurns(
        dataset=[{"question": "q", "answer": ""}],
        max_turns=2,
        max_retries=0,
        rubric=vf.Rubric([lambda completion: 1.0]),
    )
    row = env.evaluate_sync(_token_client([1, 2, 3, 4, 8, 8]), "m", progress=False).rows[0]
    assert (row["prompt_ids"], row["completion_ids"], row["completion_mask"]) == (
        [1, 2],
        [3, 4, 8, 8, 5],
        [1, 1, 0, 0, 1],
    )
    assert row["completion_logprobs"] == [-0.1, -0.2, 0.0, 0.0, 0.0]
    # A backend that re-tokenised the history: that rollout is an error row, not spliced data.
    bad = env.evaluate_sync(_token_client([1, 2, 6, 8, 8]), "m", progress=False).rows[0]
    assert bad["stop_reason"] == "error" and "do not extend" in bad["error"]["message"]


def test_tool_env_and_token_engine_answer_tool_calls_alike():
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    env = vf.ToolEnv(tools=[add], dataset=[{"question": "q", "answer": ""}])
    manager = ToolManager([add])
    cases = [("add", '{"a": 1, "b": 2}'), ("nope", "{}"), ("add", '{"a": 1}'), ("add", "{bad")]
    for name, args in cases:
        env_msg, _ = asyncio.run(
            env._answer({"id": "c1", "function": {"name": name, "arguments": args}}, 0, {})
        )
        tm_msg = asyncio.run(manager.call_async(ParsedToolCall("c1", name, args)))
        assert env_msg["content"] == tm_msg["content"], (name, args)
    assert env_msg["content"].startswith("Error (bad_arguments) calling tool 'add'")
    unknown = asyncio.run(manager.call_async(ParsedToolCall("c1", "nope", "{}")))
    assert (
        unknown["content"]
        == "Error (unknown_tool) calling tool 'nope': no such tool; available: add"
    )
    assert (
        asyncio.run(manager.call_async(ParsedToolCall("c1", "add", '{"a": 1, "b": 2}')))["content"]
        == "3"
    )
    parse = asyncio.run(
        manager.call_async(ParsedToolCall("c2", "add", "{x", "parse_error: bad json"))
    )
    assert (
        parse["content"]
        == "Error (parse_error) calling tool 'add': could not parse tool call: parse_error: bad json"
    )


def test_typed_records_name_every_field_the_library_lays_out():
    from verifiers_lite.core.state import new_state, state_to_row

    st = new_state(
        {"prompt": [{"role": "user", "content": "q"}], "example_id": 1},
        model="m",
        sampling_args=None,
        tool_defs=None,
    )
    assert set(st) <= set(records.State.__annotations__), set(st) - set(
        records.State.__annotations__
    )
    row = state_to_row(st)
    assert set(row) == set(columns.ROW_KEYS) and set(row) <= set(records.Row.__annotations__)
    assert set(records.RolloutInput.__annotations__) >= {
        "prompt",
        "answer",
        "info",
        "task",
        "example_id",
    }
    assert (
        vf.State is records.State
        and vf.RolloutInput is records.RolloutInput
        and "Row" in vf.__all__
    )


def test_one_closed_set_of_error_categories_and_token_keys():
    from typing import get_args

    from verifiers_lite.core import errors

    assert errors.ERROR_CATEGORIES is records.ERROR_CATEGORIES == get_args(records.ErrorCategory)
    # The closed set as the docs document it: a new category must be added here on purpose.
    assert set(records.ERROR_CATEGORIES) == {
        "model_http_error",
        "model_rate_limited",
        "model_timeout",
        "model_connection",
        "model_crashed",
        "model_bad_response",
        "prompt_too_long",
        "env_error",
        "rollout_timeout",
        "rubric_error",
        "cancelled",
        "remote_error",
    }
    assert len(records.ERROR_CATEGORIES) == len(set(records.ERROR_CATEGORIES))
    assert records.TOKEN_KEYS == (
        "prompt_ids",
        "completion_ids",
        "completion_mask",
        "completion_logprobs",
    )
    assert set(records.TOKEN_KEYS) <= set(records.Row.__annotations__) & set(
        records.Trajectory.__annotations__
    )
    assert set(records.ErrorRecord.__annotations__) == {
        "category",
        "message",
        "traceback",
        "traceback_id",
    }


def test_the_wire_sample_is_a_row_plus_remove_sample():
    from verifiers_lite.server.protocol import RolloutSample

    declared = set(RolloutSample.model_fields) - {"remove_sample"}
    assert declared and declared <= set(records.Row.__annotations__), declared - set(
        records.Row.__annotations__
    )
    row = {
        "example_id": 0,
        "reward": 1.0,
        "metrics": {"acc": 1.0},
        "completion": [],
        "error": None,
        "timing": {"total_ms": 1.0},
        "turns": 1,
    }
    sample = RolloutSample.model_validate(row)
    assert (
        sample.model_dump(exclude={"remove_sample"}) == row
    )  # every row key crosses the wire as it is
