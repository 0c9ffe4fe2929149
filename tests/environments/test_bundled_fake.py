"""Bundled environments end to end against the fake server (always run, no model needed)."""

from __future__ import annotations

import pytest
from verifiers_lite_envs._common import parse_number
from verifiers_lite_envs.calculator import calculator, safe_eval

import verifiers_lite as vf

BUNDLED = ["arithmetic", "calculator", "guess_number", "reasoning_gym"]


def test_all_bundled_environments_are_listed():
    assert set(BUNDLED) <= set(vf.list_environments())
    assert "_common" not in vf.list_environments()


@pytest.mark.parametrize("env_id", BUNDLED)
def test_data_is_deterministic_per_seed(env_id):
    a = vf.load_environment(env_id, num_examples=5, seed=3).get_eval_dataset()
    b = vf.load_environment(env_id, num_examples=5, seed=3).get_eval_dataset()
    c = vf.load_environment(env_id, num_examples=5, seed=4).get_eval_dataset()
    assert len(a) == 5 and a == b
    assert [r["answer"] for r in a] != [r["answer"] for r in c] or [r["prompt"] for r in a] != [
        r["prompt"] for r in c
    ]


@pytest.mark.parametrize("env_id", BUNDLED)
def test_environment_has_a_docstring_saying_what_it_measures(env_id):
    import importlib

    doc = importlib.import_module(f"verifiers_lite_envs.{env_id}").__doc__ or ""
    assert "Measures" in doc and "seed" in doc


def test_arithmetic_against_fake_model(fake_server):
    env = vf.load_environment("arithmetic", num_examples=12)
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-arith", rollouts_per_example=2, progress=False
    )
    df = out.to_pandas()
    assert len(df) == 24 and df["error"].isna().all()
    assert set(df["reward"]) <= {0.0, 1.0} and 0 < df["reward"].mean() < 1
    assert (df["answered"] == 1.0).all()
    # one-digit operands by default, with two few-shot turns before the question
    prompt = out.rows[0]["prompt"]
    assert prompt[0]["role"] == "system" and len(prompt) == 6
    assert out.rows[0]["info"]["op"] in "+-*" and 0 <= out.rows[0]["info"]["a"] <= 9


def test_arithmetic_options_are_checked():
    with pytest.raises(ValueError, match="operations"):
        vf.load_environment("arithmetic", operations="/")
    env = vf.load_environment("arithmetic", num_examples=30, digits=2, operations="+-*", seed=1)
    ops = {r["info"]["op"] for r in env.get_eval_dataset()}
    assert ops == {"+", "-", "*"}


def test_arithmetic_splits_share_no_question_and_repeat_none():
    def questions(split, seed, digits=1, n=1000):
        env = vf.load_environment(
            "arithmetic", num_examples=n, seed=seed, digits=digits, operations="-", split=split
        )
        return [(r["info"]["a"], r["info"]["b"]) for r in env.get_eval_dataset()]

    parts = {
        split: questions(split, seed) for seed, split in enumerate(("train", "validation", "test"))
    }
    everything = {(a, b) for a in range(10) for b in range(10)}
    assert all(len(set(q)) == len(q) for q in parts.values())  # distinct within a split
    assert set().union(*map(set, parts.values())) == everything  # the thirds cover all 100
    assert sum(len(q) for q in parts.values()) == 100  # and overlap nowhere
    assert questions("test", 5) != parts["test"] and set(questions("test", 5)) == set(parts["test"])
    big = questions("test", 1, digits=3, n=50)  # a space too large to list: sampled, still distinct
    assert len(set(big)) == 50 and not set(big) & set(questions("train", 1, digits=3, n=50))
    with pytest.raises(ValueError, match="split"):
        vf.load_environment("arithmetic", split="held_out")


def test_arithmetic_skip_continues_the_draw_and_worked_examples_match_the_operands():
    def texts(**kw):
        env = vf.load_environment("arithmetic", digits=2, operations="+", split="test", **kw)
        return [r["prompt"][-1]["content"] for r in env.get_eval_dataset()]

    whole = texts(num_examples=30, seed=4)
    assert texts(num_examples=20, seed=4, skip=10) == whole[10:]  # disjoint parts of one draw
    env = vf.load_environment("arithmetic", digits=2, operations="+")
    shots = [m["content"] for m in env.few_shot if m["role"] == "assistant"]
    for shot in shots:  # two-digit operands, and each worked answer is right
        a, b, c = (int(x) for x in shot.replace("+", " ").replace("=", " ").split())
        assert 10 <= a <= 99 and 10 <= b <= 99 and a + b == c
    with pytest.raises(ValueError, match="skip"):
        vf.load_environment("arithmetic", skip=-1)


def test_calculator_tool_env_against_fake_model(fake_server):
    env = vf.load_environment("calculator", num_examples=6)
    out = env.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-tool", progress=False)
    df = out.to_pandas()
    assert df["error"].isna().all()
    assert (df["reward"] == 1.0).all()  # the fake model always asks the tool, then reports it
    assert (df["used_calculator"] == 1.0).all() and (df["turns"] == 2).all()
    tool_msgs = [m for m in out.rows[0]["completion"] if m["role"] == "tool"]
    assert tool_msgs and tool_msgs[0]["content"] == out.rows[0]["answer"]


def test_calculator_never_evaluates_code():
    assert safe_eval("(12 + 7) * 3") == 57
    assert calculator("2 ^ 10") == "1024"
    assert calculator("7 / 2") == "3.5"
    assert calculator("1 / 0") == "Error: division by zero"
    for evil in [
        "__import__('os').system('true')",
        "(1).__class__",
        "x + 1",
        "9 ** 9 ** 9",
        "[1] * 3",
    ]:
        assert calculator(evil).startswith("Error"), evil


def test_guess_number_against_fake_bisecting_model(fake_server):
    env = vf.load_environment("guess_number", num_examples=8, high=20, max_turns=6)
    out = env.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-guess", progress=False)
    df = out.to_pandas()
    assert df["error"].isna().all()
    assert (df["solved"] == 1.0).all()  # bisection finds 1..20 within 5 guesses
    assert (df["stop_reason"] == "env_done").all()
    assert ((df["reward"] > 0.5) & (df["reward"] <= 1.0)).all()
    # fewer turns, more reward
    assert df.sort_values("guesses")["reward"].is_monotonic_decreasing
    feedback = [m["content"] for m in out.rows[0]["completion"] if m["role"] == "user"]
    assert all(f in ("Higher.", "Lower.") for f in feedback)


def test_guess_number_unsolved_scores_zero(fake_server):
    env = vf.load_environment("guess_number", num_examples=3, high=100, max_turns=2)
    out = env.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-echo", progress=False)
    df = out.to_pandas()
    assert (df["stop_reason"] == "max_turns").all() and (df["reward"] == 0.0).all()


def test_reasoning_gym_uses_its_own_scorer(fake_server):
    env = vf.load_environment(
        "reasoning_gym", task="chain_sum", num_examples=6, min_terms=2, max_terms=2
    )
    rows = env.get_eval_dataset()
    assert rows[0]["info"]["rg_task"] == "chain_sum"
    out = env.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-arith", progress=False)
    df = out.to_pandas()
    assert df["error"].isna().all() and df["reward"].between(0, 1).all()
    # the fake model answers \boxed{a op b} right about half the time: the scorer must tell
    expected = [
        1.0 if parse_number(r["completion"][-1]["content"]) == r["answer"] else 0.0
        for r in out.rows
    ]
    assert list(df["rg_score"]) == expected


def test_reasoning_gym_unknown_task_is_a_clear_error():
    with pytest.raises(ValueError, match="no_such_task"):
        vf.load_environment("reasoning_gym", task="no_such_task")
