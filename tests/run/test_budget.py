"""Run budgets (``max_cost_usd``, ``max_tokens_total``, ``max_wall_s``): the gate on its own
(what it lets start, against hand-computed projections), then runs against the fake server that
stop at a budget and resume with a larger one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

import verifiers_lite as vf
from verifiers_lite.run.budget import BudgetGate, RunBudget, row_tokens
from verifiers_lite.ui.notebook.results_html import results_html


@dataclass
class Unit:
    inputs: list[Any] = field(default_factory=lambda: [{}, {}])  # a group of 2


def row(cost: float | None = 0.0, prompt: int = 0, completion: int = 0, ms: float | None = None):
    r: dict[str, Any] = {
        "cost_usd": cost,
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
    }
    if ms is not None:
        r["timing"] = {"total_ms": ms}
    return r


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_budget_values_are_checked():
    assert not RunBudget()
    assert RunBudget(max_wall_s=1)
    for kw, error in [
        ({"max_cost_usd": 0}, ValueError),
        ({"max_cost_usd": -1.0}, ValueError),
        ({"max_cost_usd": float("inf")}, ValueError),
        ({"max_tokens_total": 2.5}, TypeError),
        ({"max_wall_s": True}, TypeError),
        ({"max_wall_s": "60"}, TypeError),
    ]:
        with pytest.raises(error, match=next(iter(kw))):
            RunBudget(**kw)


def test_cost_projection_stops_before_the_budget_would_be_exceeded():
    gate = BudgetGate(RunBudget(max_cost_usd=1.0))
    units = gate.units(iter([Unit() for _ in range(100)]))
    first = [next(units), next(units)]  # nothing known: the first wave starts (4 rollouts)
    assert gate.in_flight == 4 and len(first) == 2
    gate.add([row(0.1), row(0.1)])  # mean 0.10 a rollout; 0.20 spent, 2 in flight
    # 0.20 + (2 in flight + 2 new) * 0.10 = 0.60 <= 1.00: starts; then 0.20 + 6*0.10 = 0.80;
    # then 0.20 + 8*0.10 = 1.00 (not past); then 0.20 + 10*0.10 = 1.20: stops
    started = list(units)
    assert len(started) == 3
    assert gate.stopped == "cost"
    assert gate.in_flight == 8
    gate.add([row(0.1)] * 8)
    assert gate.cost_usd == pytest.approx(1.0)
    assert gate.record()["stopped"] == "budget (cost 1.00 of 1.00 USD)"
    assert gate.record()["spent"]["cost_usd"] == pytest.approx(1.0)


def test_token_budget_counts_prompt_and_completion_tokens():
    assert row_tokens(row(prompt=30, completion=12)) == 42
    assert row_tokens({"usage": {"prompt_tokens": True}}) == 0
    gate = BudgetGate(RunBudget(max_tokens_total=1000))
    gate.add([row(prompt=100, completion=50)] * 4)  # 600 spent, 150 a rollout
    assert gate.exceeded_by(2) is None  # 600 + 2 * 150 = 900
    assert gate.exceeded_by(3) == "tokens"  # 600 + 3 * 150 = 1050
    units = gate.units(iter([Unit(), Unit()]))
    assert len(list(units)) == 1
    assert gate.message() == "budget (tokens 600 of 1,000)"


def test_spent_at_the_budget_stops_even_without_a_projection():
    gate = BudgetGate(RunBudget(max_cost_usd=0.5))
    gate.add([row(0.5)])
    assert gate.exceeded_by(0) == "cost"


def test_unpriced_rows_add_no_cost():
    gate = BudgetGate(RunBudget(max_cost_usd=0.5))
    gate.add([row(None), row(float("nan"))])
    assert gate.cost_usd == 0.0 and gate.exceeded_by(100) is None


def test_wall_budget_counts_earlier_sessions_and_a_rollouts_mean_time():
    clock = Clock()
    gate = BudgetGate(RunBudget(max_wall_s=60), earlier_wall_s=40.0, clock=clock)
    assert gate.exceeded_by(1) is None
    gate.add([row(ms=5000.0), row(ms=3000.0)])  # 4 s a rollout
    clock.t += 15.0  # 55 s in all
    assert gate.exceeded_by(1) is None  # 55 + 4 = 59
    clock.t += 2.0  # 57 + 4 = 61
    assert gate.exceeded_by(1) == "wall"
    assert list(gate.units(iter([Unit()]))) == []
    assert gate.message() == "budget (wall time 57.0 of 60 s)"


def test_a_larger_budget_goes_on_from_what_was_spent():
    saved = [row(0.25)] * 4  # an earlier session spent 1.00
    same = BudgetGate(RunBudget(max_cost_usd=1.0))
    same.add(saved)
    assert list(same.units(iter([Unit()]))) == [] and same.stopped == "cost"
    larger = BudgetGate(RunBudget(max_cost_usd=2.0))
    larger.add(saved)
    # 1.00 + 2 * 0.25 = 1.50, 1.00 + 4 * 0.25 = 2.00, then 2.50: two more units
    assert len(list(larger.units(iter([Unit()] * 5)))) == 2


def test_no_budget_met_records_no_stop():
    gate = BudgetGate(RunBudget(max_cost_usd=10.0))
    assert len(list(gate.units(iter([Unit()] * 3)))) == 3
    assert gate.record()["stopped"] is None


# --- runs against the fake server ---------------------------------------------------------------


PRICE = {"fake-arith": vf.ModelPrice(input=1000.0, output=1000.0)}  # 0.001 USD a token


def _env(n: int = 30) -> vf.SingleTurnEnv:
    rows = [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(n)]
    return vf.SingleTurnEnv(dataset=rows)


def _evaluate(server, path, **options: Any):
    return _env().evaluate_sync(
        vf.ChatClient(server.base_url),
        "fake-arith",
        num_examples=30,
        results_path=path,
        prices=PRICE,
        max_concurrent=2,
        progress=False,
        **options,
    )


def _spent(rows) -> float:
    return sum(r["cost_usd"] for r in rows)


def test_a_cost_budget_stops_the_run_and_a_larger_one_resumes_it(fake_server, tmp_path):
    path = tmp_path / "run"
    full = _env().evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        num_examples=30,
        prices=PRICE,
        progress=False,
    )
    per_rollout = max(r["cost_usd"] for r in full.rows)  # every rollout costs about the same
    budget = round(_spent(full.rows) / 3, 3)

    first = _evaluate(fake_server, path, max_cost_usd=budget)
    spent = _spent(first.rows)
    assert 0 < len(first) < 30
    assert budget - 2 * per_rollout <= spent <= budget + 2 * per_rollout  # 2 were in flight
    record = first.metadata["budget"]
    assert record["stopped"] == f"budget (cost {spent:.2f} of {budget:.2f} USD)"
    assert record["spent"]["cost_usd"] == pytest.approx(spent, abs=1e-9)
    assert first.metadata["status"] == "completed"

    second = _evaluate(fake_server, path, max_cost_usd=2 * budget)
    assert len(first) < len(second) < 30
    kept = {r["example_id"]: r for r in second.rows if r["session"] == 0}
    assert set(kept) == {r["example_id"] for r in first.rows}  # went on where it stopped
    assert _spent(second.rows) <= 2 * budget + 2 * per_rollout
    assert second.metadata["budget"]["stopped"].startswith("budget (cost ")

    assert f"stopped: {second.metadata['budget']['stopped']}" in results_html(second)
    third = _evaluate(fake_server, path)  # no budget: the rest
    assert len(third) == 30 and "budget" not in third.metadata


def test_a_token_budget_stops_the_run(fake_server, tmp_path):
    out = _evaluate(fake_server, tmp_path / "run", max_tokens_total=200)
    tokens = sum(row_tokens(r) for r in out.rows)
    assert 0 < len(out) < 30 and tokens <= 200 + 2 * max(row_tokens(r) for r in out.rows)
    assert out.metadata["budget"]["stopped"] == f"budget (tokens {tokens:,} of 200)"


def test_a_wall_budget_stops_the_run(fake_server, tmp_path):
    fake_server.configure(latency_ms=40)
    out = _evaluate(fake_server, tmp_path / "run", max_wall_s=0.3)
    assert 0 < len(out) < 30
    assert out.metadata["budget"]["stopped"].startswith("budget (wall time ")


def test_a_cost_budget_for_an_unpriced_model_is_refused_before_any_request(fake_server):
    with pytest.raises(ValueError, match="max_cost_usd needs a price for 'fake-arith'"):
        _env().evaluate_sync(
            vf.ChatClient(fake_server.base_url), "fake-arith", max_cost_usd=1.0, progress=False
        )
    assert fake_server.stats()["requests"] == 0


def test_the_first_unit_runs_alone_until_a_cost_is_known():
    import asyncio

    async def main() -> list[str]:
        gate = BudgetGate(RunBudget(max_tokens_total=10_000))
        units = gate.units(iter([Unit() for _ in range(3)]))
        events: list[str] = []

        async def worker(name: str) -> None:
            await gate.ready()
            if next(units, None) is not None:
                events.append(f"{name} took a unit")

        first = asyncio.ensure_future(worker("a"))
        await first
        second = asyncio.ensure_future(worker("b"))
        for _ in range(3):
            await asyncio.sleep(0)
        events.append("b waits" if not second.done() else "b did not wait")
        gate.add([row(prompt=10, completion=10)] * 2)
        await second
        return events

    assert asyncio.run(main()) == ["a took a unit", "b waits", "b took a unit"]
    # without a cost or token budget nothing waits
    wall = BudgetGate(RunBudget(max_wall_s=10))
    wall.in_flight = 4
    asyncio.run(wall.ready())
