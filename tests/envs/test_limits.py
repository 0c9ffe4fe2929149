"""Per-rollout limits (vf.Limits): each kind ends the rollout with its stop reason, the rollout
is scored as it stands, and a run's limits override the environment's. Native tool
environments against the fake server, native and classic tool environments on the token
engine (a scripted sampler over a character-level template: every count is a length)."""

from __future__ import annotations

import pytest
from datasets import Dataset

import verifiers_lite as vf
import verifiers_lite.classic as classic_vf
from tests.helpers.tool_player import add, tool_player
from verifiers_lite.rollout import SamplingParams, TokenClient
from verifiers_lite.rollout.testing import ScriptedSampler, toy_template


def boxed_correct(completion, answer) -> float:
    """1 when the last message boxes the answer (a tool call's empty content scores 0)."""
    return float(f"\\boxed{{{answer}}}" in (completion[-1].get("content") or ""))


def calculator(expression: str) -> str:
    """Evaluate a + b."""
    a, _, b = expression.split()
    return str(int(a) + int(b))


def _tool_env(**kwargs) -> vf.ToolEnv:
    return vf.ToolEnv(
        tools=[calculator],
        dataset=[{"question": "What is 2 + 5?", "answer": "7"}],
        rubric=vf.Rubric([boxed_correct]),
        **kwargs,
    )


def _run_fake(fake_server, env, **options) -> dict:
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-tool", progress=False, **options
    )
    (row,) = out.rows
    return row


def test_without_limits_the_tool_rollout_takes_two_turns(fake_server):
    row = _run_fake(fake_server, _tool_env())
    assert (row["stop_reason"], row["turns"], row["reward"]) == ("stop", 2, 1.0)


def test_turn_limit_ends_after_the_last_allowed_turn_before_its_tools_run(fake_server):
    row = _run_fake(fake_server, _tool_env(limits=vf.Limits(turns=1)))
    assert row["stop_reason"] == "turn_limit" and row["turns"] == 1
    assert [m["role"] for m in row["completion"]] == ["assistant"]  # the tool call never ran
    assert row["reward"] == 0.0 and row["error"] is None  # scored as it stands
    assert fake_server.stats()["requests"] == 1


def test_tool_limit_counts_the_models_calls_before_running_them(fake_server):
    row = _run_fake(fake_server, _tool_env(), limits=vf.Limits(tool_calls=0))
    assert row["stop_reason"] == "tool_limit" and row["turns"] == 1
    assert [m["role"] for m in row["completion"]] == ["assistant"]


def test_cost_limit_needs_a_price_and_stops_once_spent(fake_server):
    # At 1 USD per token each way the first call (a dozen tokens) spends more than 5 USD.
    price = {"fake-tool": vf.ModelPrice(input=1e6, output=1e6)}
    row = _run_fake(fake_server, _tool_env(), limits=vf.Limits(cost_usd=5.0), prices=price)
    assert row["stop_reason"] == "cost_limit" and row["turns"] == 1
    assert row["cost_usd"] == pytest.approx(
        row["usage"]["prompt_tokens"] + row["usage"]["completion_tokens"]
    )
    unpriced = _run_fake(fake_server, _tool_env(), limits=vf.Limits(cost_usd=5.0))
    assert unpriced["stop_reason"] == "stop"  # an unpriced model's cost is unknown, never 0


def test_time_limit_stops_after_a_slow_call(fake_server):
    fake_server.configure(latency_ms=150)
    row = _run_fake(fake_server, _tool_env(limits=vf.Limits(time_s=0.1)))
    assert row["stop_reason"] == "time_limit" and row["turns"] == 1


def test_a_runs_limits_override_the_environments_field_by_field(fake_server):
    env = _tool_env(limits=vf.Limits(turns=1, tool_calls=5))
    row = _run_fake(fake_server, env, limits=vf.Limits(turns=3))
    assert row["stop_reason"] == "stop" and row["turns"] == 2


# --- the token engine: token counts are character counts of the toy template ---------------


def _token_client(max_tokens: int = 400) -> tuple[TokenClient, ScriptedSampler]:
    template = toy_template()
    sampler = ScriptedSampler(template, tool_player())
    return TokenClient(sampler, template, SamplingParams(max_tokens=max_tokens)), sampler


def _native_tool_env(**kwargs) -> vf.ToolEnv:
    rows = [{"question": "What is 3 + 4?", "answer": "7"}]
    return vf.ToolEnv(tools=[add], dataset=rows, rubric=vf.Rubric([boxed_correct]), **kwargs)


def _classic_tool_env(**kwargs):
    def boxed(completion, answer) -> float:
        return float(f"\\boxed{{{answer}}}" in completion[-1].content)

    # a datasets.Dataset, as verifiers 0.3.1 requires of a classic environment
    rows = Dataset.from_list([{"question": "What is 3 + 4?", "answer": "7"}])
    return classic_vf.ToolEnv(
        tools=[add], dataset=rows, rubric=classic_vf.Rubric(funcs=[boxed]), max_turns=4, **kwargs
    )


@pytest.mark.parametrize(
    "make_env", [_native_tool_env, _classic_tool_env], ids=["native", "classic"]
)
def test_token_limit_clips_the_calls_max_tokens_and_names_the_stop(make_env):
    client, sampler = _token_client()
    (full,) = make_env().evaluate_sync(client, "toy", progress=False).rows
    assert full["stop_reason"] in ("stop", "env_done") and len(sampler.calls) == 2
    # A limit the first call fits in but the second cannot: the second call's prompt holds at
    # least the first call's prompt and answer, so 5 tokens over those leave no room.
    first_call_tokens = len(sampler.calls[0][0]) + _first_answer_tokens(full)
    client, sampler = _token_client()
    out = make_env().evaluate_sync(
        client, "toy", limits=vf.Limits(total_tokens=first_call_tokens + 5), progress=False
    )
    (row,) = out.rows
    assert row["stop_reason"] == "token_limit"
    assert row["error"] is None and row["reward"] == 0.0
    assert len(sampler.calls) == 1  # the second call was not made


def _first_answer_tokens(row: dict) -> int:
    """Tokens the model sampled in its first turn: the leading run of 1s of the mask."""
    mask = row["completion_mask"]
    return mask.index(0) if 0 in mask else len(mask)


@pytest.mark.parametrize(
    "make_env", [_native_tool_env, _classic_tool_env], ids=["native", "classic"]
)
def test_turn_limit_on_the_token_engine(make_env):
    client, sampler = _token_client()
    out = make_env().evaluate_sync(client, "toy", limits=vf.Limits(turns=1), progress=False)
    (row,) = out.rows
    assert row["stop_reason"] == "turn_limit" and row["error"] is None
    assert len(sampler.calls) == 1


def test_a_first_call_is_clipped_to_the_whole_token_limit():
    client, sampler = _token_client()
    out = _native_tool_env().evaluate_sync(
        client, "toy", limits=vf.Limits(total_tokens=10), progress=False
    )
    (row,) = out.rows
    # The first call may generate at most 10 tokens (no earlier call to estimate its prompt
    # from): the answer is cut there, and the stop names the limit, not the length.
    assert row["usage"]["completion_tokens"] == 10
    assert row["stop_reason"] == "token_limit" and len(sampler.calls) == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"turns": 0}, "Limits.turns must be > 0"),
        ({"turns": 1.5}, "Limits.turns must be an int"),
        ({"cost_usd": -1.0}, "Limits.cost_usd must be > 0"),
        ({"tool_calls": -1}, "Limits.tool_calls must be >= 0"),
        ({"time_s": float("nan")}, "Limits.time_s must be > 0"),
    ],
)
def test_bad_limits_are_refused_when_made(kwargs, message):
    with pytest.raises((TypeError, ValueError), match=message):
        vf.Limits(**kwargs)


def test_limits_of_the_wrong_kind_are_refused_before_any_request(fake_server):
    with pytest.raises(TypeError, match="RunConfig.limits must be a vf.Limits"):
        _run_fake(fake_server, _tool_env(), limits={"turns": 1})
    with pytest.raises(TypeError, match="limits must be a vf.Limits"):
        _tool_env(limits={"turns": 1})
    assert fake_server.stats()["requests"] == 0
