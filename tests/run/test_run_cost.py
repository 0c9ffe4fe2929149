"""A run's cost figures: total and mean cost per rollout with its interval (clustered by
example) in the one summary, and what shows them — the CLI table, the notebook's HTML, the
viewer, and cost per unit of reward in compare; "unpriced", never 0, for a model without a
price."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

import verifiers_lite as vf
from verifiers_lite.cli.report import format_table, run_summary
from verifiers_lite.core.summary import RunSummary, cost_line, cost_per_reward
from verifiers_lite.ui.notebook.results_html import results_html
from verifiers_lite.ui.viewer.runs import RunRegistry


def _row(eid: int, cost: float | None, reward: float = 1.0) -> dict[str, Any]:
    return {"example_id": eid, "rollout_index": 0, "reward": reward, "cost_usd": cost}


def test_cost_figures_against_hand_computation():
    costs = {0: [0.010, 0.012], 1: [0.020, 0.018, 0.022], 2: [0.005], 3: [0.030, 0.031]}
    rows = [_row(e, c) for e, cs in costs.items() for c in cs]
    s = RunSummary().add_all(rows).summary()
    values = np.array([c for cs in costs.values() for c in cs])
    n, g = len(values), len(costs)
    mean = values.mean()
    # CR1 clustered standard error: sum over examples of (their residual sum)^2, g/(g-1)
    resid = np.array([sum(c - mean for c in cs) for cs in costs.values()])
    se = math.sqrt((resid**2).sum() * g / (g - 1)) / n
    sizes = np.array([len(cs) for cs in costs.values()], float)
    df = (sizes**2).sum() ** 2 / (sizes**4).sum() - 1
    half = stats.t.ppf(0.975, df) * se
    assert s["cost_usd_total"] == pytest.approx(values.sum(), abs=1e-12)
    assert s["cost_usd_mean"] == pytest.approx(mean, abs=1e-12)
    assert s["cost_usd_stderr"] == pytest.approx(se, rel=1e-9)
    assert s["cost_usd_ci"] == pytest.approx((mean - half, mean + half), rel=1e-9)
    assert s["num_unpriced"] == 0
    assert cost_per_reward(s) == pytest.approx(values.sum() / n)  # every reward 1


def test_unpriced_is_never_zero_and_free_is_zero():
    unpriced = RunSummary().add_all([_row(0, None), _row(1, None)]).summary()
    assert unpriced["cost_usd_total"] is None and unpriced["cost_usd_mean"] is None
    assert unpriced["num_unpriced"] == 2
    assert cost_line(unpriced) == "unpriced" and cost_per_reward(unpriced) is None
    free = RunSummary().add_all([_row(0, 0.0), _row(1, 0.0)]).summary()
    assert free["cost_usd_total"] == 0.0 and cost_line(free).startswith("$0.00 total")
    mixed = RunSummary().add_all([_row(0, 0.5), _row(1, None)]).summary()
    assert mixed["cost_usd_total"] == 0.5 and cost_line(mixed).endswith("(1 rollouts unpriced)")
    assert RunSummary().add_all([{"example_id": 0, "reward": 1.0}]).summary()["num_unpriced"] == 1


def test_cost_per_unit_of_reward_counts_every_cost_and_the_rewards_earned():
    rows = [_row(0, 0.2, 1.0), _row(0, 0.2, 0.0), _row(1, 0.1, 0.5), _row(2, 0.1, float("nan"))]
    s = RunSummary().add_all(rows).summary()
    assert cost_per_reward(s) == pytest.approx(0.6 / 1.5)
    zero = RunSummary().add_all([_row(0, 0.2, 0.0)]).summary()
    assert cost_per_reward(zero) is None  # no reward earned: no ratio


PRICE = {"fake-arith": vf.ModelPrice(input=1000.0, output=1000.0)}


def _run(server, path, prices=PRICE, system_prompt: str | None = None):
    rows = [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(6)]
    env = vf.SingleTurnEnv(
        dataset=rows, system_prompt=system_prompt, rubric=vf.Rubric(funcs=[_right])
    )
    return env.evaluate_sync(
        vf.ChatClient(server.base_url),
        "fake-arith",
        rollouts_per_example=2,
        results_path=path,
        prices=prices,
        progress=False,
    )


def _right(completion, answer) -> float:
    return float(f"\\boxed{{{answer}}}" in str(completion[-1]["content"]))


def test_a_runs_cost_shows_in_metadata_table_notebook_viewer_and_compare(fake_server, tmp_path):
    out = _run(fake_server, tmp_path / "a")
    spent = sum(r["cost_usd"] for r in out.rows)
    md = out.metadata
    assert spent > 0 and md["cost_usd_total"] == pytest.approx(spent, abs=1e-9)
    assert md["num_unpriced"] == 0
    line = cost_line(md)
    assert line.startswith(f"${spent:.4g} total")

    summary = run_summary(list(out.rows), 2, 1.0)
    assert "cost" in format_table(summary, "run", {}) and line in format_table(summary, "run", {})
    assert line in results_html(out)

    run = RunRegistry([tmp_path]).find(tmp_path / "a")
    assert run is not None
    viewer = run.summary()
    assert viewer["cost"] == cost_line(md, per_reward=True)
    assert run.detail()["stats"]["cost"] == viewer["cost"]

    other = _run(fake_server, tmp_path / "b", system_prompt="Answer in \\boxed{}.")
    c = vf.compare_runs(out, other)
    rewards = sum(r["reward"] for r in out.rows)
    assert c.to_dict()["runs"][0]["cost_per_reward"] == pytest.approx(spent / rewards)
    assert "per unit of reward" in c.describe()
    table = vf.compare([out, other], details=True)
    assert table["cost_per_reward"].iloc[0] == pytest.approx(spent / rewards)


def test_an_unpriced_run_says_unpriced_everywhere(fake_server, tmp_path):
    out = _run(fake_server, tmp_path / "u", prices=None)
    assert out.metadata["cost_usd_total"] is None and out.metadata["num_unpriced"] == 12
    assert "unpriced" in results_html(out)
    summary = run_summary(list(out.rows), 2, 1.0)
    assert "unpriced" in format_table(summary, "run", {})
    run = RunRegistry([tmp_path]).find(tmp_path / "u")
    assert run is not None and run.summary()["cost"] == "unpriced"
