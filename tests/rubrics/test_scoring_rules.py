"""Scoring rules a researcher can trust: every reward function counts, errored rollouts are not
scored, cleanup errors stay on their row, pass criteria are explicit, columns are never dropped."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

import verifiers_lite as vf
from verifiers_lite.cli.report import format_table, run_summary
from verifiers_lite.core.errors import ModelAPIError
from verifiers_lite.core.model_client import ChatResponse, TurnUsage
from verifiers_lite.core.progress import RunStats
from verifiers_lite.results.metrics import PassCriterion, pass_at_k
from verifiers_lite.results.outputs import GenerateOutputs
from verifiers_lite.rubrics.rubric import unique_names


def echo_env(
    questions: list[str], funcs: list[Any], weights: list[float] | None = None, **kw: Any
) -> vf.SingleTurnEnv:
    rows = [{"question": q, "answer": q} for q in questions]
    return vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric(funcs, weights), **kw)


# -- duplicate reward-function names --------------------------------------------------------


def test_two_lambdas_both_count_under_unique_names(fake_server):
    env = echo_env(["a b", "c d"], [lambda completion: 1.0, lambda completion: 0.5])
    out = env.evaluate_sync(fake_server.base_url, "fake-echo", progress=False)
    assert [r["reward"] for r in out.rows] == [1.5, 1.5]  # 1.0 + 0.5, not 0.5 overwriting 1.0
    assert [r["metrics"] for r in out.rows] == [{"<lambda>": 1.0, "<lambda>_2": 0.5}] * 2
    df = out.to_pandas()
    assert list(df["<lambda>"]) == [1.0, 1.0] and list(df["<lambda>_2"]) == [0.5, 0.5]


def test_unique_names_suffix_in_order_and_skip_taken_names():
    def a() -> float:
        return 0.0

    def a_2() -> float:
        return 0.0

    funcs = [a, a, a_2, lambda: 0.0, lambda: 0.0]
    assert unique_names(funcs) == ["a", "a_2", "a_2_2", "<lambda>", "<lambda>_2"]


# -- errored rollouts are not scored ---------------------------------------------------------


class ThirdCallFails:
    """Per question: 1st call answers "right", 2nd "wrong", 3rd fails (not retryable). Token ids
    are returned so a training batch can be built from the rows."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    async def chat(self, model, messages, sampling_args=None, tools=None) -> ChatResponse:
        q = messages[-1]["content"]
        n = self.calls[q] = self.calls.get(q, 0) + 1
        if n == 3:
            raise ModelAPIError("HTTP 500 from the test endpoint", category="model_http_error")
        text = "right" if n == 1 else "wrong"
        return ChatResponse(
            {"role": "assistant", "content": text},
            "stop",
            TurnUsage(2, 1),
            prompt_ids=[1, 2],
            completion_ids=[7 if n == 1 else 8],
            completion_logprobs=[-0.5],
        )


def right(completion) -> float:
    """1.0 unless the answer says "wrong" (so an empty, failed completion would score 1.0)."""
    return 0.0 if completion and completion[-1]["content"] == "wrong" else 1.0


def test_errored_rollouts_have_no_reward_and_stay_out_of_every_aggregate():
    env = echo_env(["q0", "q1", "q2"], [right])
    out = env.evaluate_sync(ThirdCallFails(), "m", rollouts_per_example=3, progress=False)
    assert len(out) == 9
    errored = [r for r in out.rows if r["error"]]
    scored = [r for r in out.rows if not r["error"]]
    assert len(errored) == 3 and len(scored) == 6
    assert all(
        r["reward"] is None and r["advantage"] is None and r["metrics"] == {} for r in errored
    )
    # Each group: scored rewards {1, 0}: mean 0.5, advantages +0.5 / -0.5 (not over 3 rollouts).
    assert (
        sorted((r["reward"], r["advantage"]) for r in scored)
        == [(0.0, -0.5)] * 3 + [(1.0, 0.5)] * 3
    )
    s = out.summary
    assert (s["num_rollouts"], s["num_scored"], s["num_errors"]) == (9, 6, 3)
    assert s["errors"] == {"model_http_error": 3}
    assert s["reward_mean"] == 0.5
    # Clustered by example: every example's scored rollouts are {1, 0} (mean 0.5), so the
    # example means do not vary and the error bar is 0 (the 6 rollouts as independent draws
    # would say 0.224); an interval of width 0 would claim certainty, so there is none, and why.
    assert s["reward_stderr"] == pytest.approx(0.0) and all(math.isnan(c) for c in s["reward_ci"])
    assert s["reward_ci_undefined"] == "no variance, every example's mean is 0.500"
    assert s["metrics_mean"] == {"right": 0.5}  # the failed rollouts' 1.0 would make it 0.667
    # pass@k over each example's 2 scored rollouts (1 pass): 1/2 and 1, not 1/3 and 2/3.
    assert out.pass_at_k(1) == 0.5 and out.pass_at_k(2) == 1.0 and math.isnan(out.pass_at_k(3))
    df = out.to_pandas()
    assert (
        df["reward"].isna().sum() == 3
        and df["right"].isna().sum() == 3
        and df["advantage"].isna().sum() == 3
    )
    assert df["reward"].mean() == 0.5  # pandas skips NaN: the same mean as the summary
    batch = out.to_training_batch()
    assert batch["row_indices"] == [i for i, r in enumerate(out.rows) if not r["error"]]
    assert sorted(batch["advantages"]) == [-0.5] * 3 + [0.5] * 3
    assert out.rewards == [r["reward"] for r in scored]
    table = format_table(run_summary(out.rows, 3, 1.0, out.pass_criterion), "t", {})
    assert (
        "0.500  (95% CI undefined: no variance, every example's mean is 0.500)  (mean ± stderr "
        "clustered by example over the 6 scored "
        "of 9; errored rollouts are not scored)"
    ) in table
    assert "model_http_error=3" in table
    assert "over 6 scored (errored rollouts are not scored)" in out._repr_html_()


def test_live_stats_count_only_scored_rewards():
    stats = RunStats(total=3)
    stats.add(
        [
            {"reward": 1.0, "error": None},
            {"reward": 0.0, "error": None},
            {"reward": None, "error": {"category": "env_error", "message": "x"}},
        ]
    )
    assert (stats.done, stats.scored, stats.mean_reward, stats.error_count) == (3, 2, 0.5, 1)


def test_rubric_error_leaves_the_rollout_unscored_and_out_of_the_group_mean():
    def boom(completion) -> float:
        if completion[-1]["content"] == "b":
            raise RuntimeError("no grader for b")
        return 1.0

    states = [
        {"completion": [{"role": "assistant", "content": c}], "error": None}
        for c in ("a", "b", "c")
    ]
    asyncio.run(vf.Rubric([boom, lambda: 0.25]).score_group(states))
    assert (
        states[1]["error"]["category"] == "rubric_error"
        and "no grader for b" in states[1]["error"]["message"]
    )
    assert states[1]["reward"] is None and states[1]["advantage"] is None
    assert [states[0]["reward"], states[2]["reward"]] == [1.25, 1.25]
    assert [states[0]["advantage"], states[2]["advantage"]] == [0.0, 0.0]


# -- cleanup errors ----------------------------------------------------------------------------


class CleanupFailsOnSecond(vf.Rubric):
    async def cleanup(self, state: dict[str, Any]) -> None:
        if state["rollout_index"] == 1:
            raise OSError("sandbox already gone")


def test_cleanup_error_stays_on_its_own_row_and_keeps_everything(fake_server):
    env = vf.SingleTurnEnv(
        dataset=[{"question": "x y z", "answer": "x y z"}],
        rubric=CleanupFailsOnSecond(
            [lambda completion, answer: float(completion[-1]["content"] == answer)]
        ),
    )
    out = env.evaluate_sync(
        fake_server.base_url, "fake-echo", rollouts_per_example=3, progress=False
    )
    by_index = {r["rollout_index"]: r for r in out.rows}
    assert by_index[0]["error"] is None and by_index[2]["error"] is None
    err = by_index[1]["error"]
    assert err["category"] == "env_error"
    assert "cleanup" in err["message"] and "sandbox already gone" in err["message"]
    for r in out.rows:  # completion and scores all kept (echo answers right: reward 1)
        assert r["completion"] == [{"role": "assistant", "content": "x y z"}]
        assert r["reward"] == 1.0 and r["advantage"] == 0.0 and r["stop_reason"] == "stop"


# -- pass criterion ------------------------------------------------------------------------------


def test_pass_criterion_on_a_named_metric_against_reward_threshold():
    rows = [
        {"example_id": 0, "reward": 0.8, "metrics": {"solved": 1.0}},
        {"example_id": 0, "reward": 1.0, "metrics": {"solved": 1.0}},
        {"example_id": 0, "reward": 0.0, "metrics": {"solved": 0.0}},
        {"example_id": 0, "reward": None, "metrics": {}, "error": {"category": "env_error"}},
    ]
    assert pass_at_k(rows, 1) == pytest.approx(1 / 3)
    assert pass_at_k(rows, 1, criterion=PassCriterion("solved")) == pytest.approx(2 / 3)
    assert pass_at_k(rows, 1, criterion=PassCriterion.coerce(0.5)) == pytest.approx(2 / 3)
    assert pass_at_k(rows, 2, criterion=PassCriterion("solved")) == pytest.approx(
        1 - 0 / 3
    )  # C(1,2)=0


def test_pass_criterion_is_validated_up_front():
    with pytest.raises(ValueError, match="'solvd'.*metrics are \\['_solved'\\]"):
        vf.Rubric([_solved], pass_criterion="solvd")
    with pytest.raises(ValueError, match="pass_criterion must be"):
        vf.Rubric([_solved], pass_criterion=[1])


def _solved() -> float:
    return 1.0


def test_guess_number_passes_on_solved_and_says_so(fake_server):
    from verifiers_lite_envs.guess_number import load_environment

    env = load_environment(num_examples=10, seed=3, max_turns=6)
    out = env.evaluate_sync(
        fake_server.base_url, "fake-guess", rollouts_per_example=2, progress=False
    )
    assert out.metadata["pass_criterion"] == {"metric": "solved", "threshold": 1.0}
    # Bisection over 1..20 always finds the secret within 5 guesses (6 allowed): every game is won,
    # but only a first-guess hit (secret 10) earns reward 1.0.
    secrets = [r["info"]["secret"] for r in out.rows if r["rollout_index"] == 0]
    assert out.pass_at_k(1) == 1.0
    assert pass_at_k(out.rows, 1) == pytest.approx(sum(s == 10 for s in secrets) / 10)
    summary = run_summary(out.rows, 2, 1.0, out.pass_criterion)
    table = format_table(summary, "guess_number", {})
    assert "pass@1" in table and "solved ≥ 1" in table
    assert summary["pass_criterion"] == {"metric": "solved", "threshold": 1.0}
    pytest.importorskip("matplotlib")
    ax = vf.plot_pass_at_k(out)  # the run's own criterion
    assert list(ax.lines[0].get_ydata()) == [1.0, 1.0] and "solved ≥ 1" in ax.get_title()
    ax = vf.plot_pass_at_k(out, threshold=1.0)
    assert ax.lines[0].get_ydata()[0] == pytest.approx(sum(s == 10 for s in secrets) / 10)


# -- data in and out -------------------------------------------------------------------------------


def test_to_pandas_keeps_metric_columns_that_first_appear_late():
    rows = [
        {"example_id": i, "rollout_index": 0, "reward": 0.0, "metrics": {"base": 0.0}}
        for i in range(1200)
    ]
    rows[1100]["metrics"]["late"] = 0.75
    df = GenerateOutputs(rows=rows).to_pandas()
    assert "late" in df.columns
    assert df["late"].iloc[1100] == 0.75 and df["late"].isna().sum() == 1199


def test_extra_dataset_columns_are_kept_in_info_and_readable_by_reward_functions(fake_server):
    rows = [
        {"question": "a", "answer": "a", "difficulty": 0.25, "source": "s1"},
        {"question": "b", "answer": "b", "difficulty": 0.75, "source": "s2", "info": {"k": 1}},
    ]

    def by_difficulty(info) -> float:
        return info["difficulty"]

    env = vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric([by_difficulty]))
    out = env.evaluate_sync(fake_server.base_url, "fake-echo", progress=False)
    assert [r["reward"] for r in out.rows] == [0.25, 0.75]
    assert [r["info"] for r in out.rows] == [
        {"difficulty": 0.25, "source": "s1"},
        {"k": 1, "difficulty": 0.75, "source": "s2"},
    ]
    # generate() with raw inputs: the same rule.
    out2 = env.generate_sync(
        [{"prompt": [{"role": "user", "content": "c"}], "difficulty": 0.5}],
        fake_server.base_url,
        "fake-echo",
        progress=False,
    )
    assert out2.rows[0]["info"] == {"difficulty": 0.5} and out2.rows[0]["reward"] == 0.5


def test_extra_column_clashing_with_info_is_refused_before_any_request(fake_server):
    env = vf.SingleTurnEnv(
        dataset=[{"question": "a", "level": 1, "info": {"level": 2}}], rubric=vf.Rubric([_solved])
    )
    with pytest.raises(ValueError, match="row 0: column 'level' is also a key of 'info'"):
        env.evaluate_sync(fake_server.base_url, "fake-echo", progress=False)
    assert fake_server.stats()["requests"] == 0
