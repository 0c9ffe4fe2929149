"""Runs that stop at the precision asked for (until=vf.Precision): examples drawn in the seeded
shuffled order, no new one once the anytime-valid interval is narrow enough, the examples run
out otherwise, a resume with a finer precision goes on, and a paired run against a baseline
stops once the difference's sign is settled."""

from __future__ import annotations

import random

import pytest

import verifiers_lite as vf
from tests.helpers.envs import arithmetic_rows, boxed_correct


def _env(n: int) -> vf.SingleTurnEnv:
    return vf.SingleTurnEnv(dataset=arithmetic_rows(n), rubric=vf.Rubric([boxed_correct]))


def _example_means(rows) -> dict[int, float]:
    by: dict[int, list[float]] = {}
    for r in rows:
        by.setdefault(r["example_id"], []).append(r["reward"])
    return {e: sum(v) / len(v) for e, v in by.items()}


def test_a_run_stops_at_the_precision_asked_for_on_a_prefix_of_the_shuffled_examples(fake_server):
    env = _env(300)
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=2,
        seed=4,
        max_concurrent=4,
        until=vf.Precision(half_width=0.15),
        progress=False,
    )
    until = out.metadata["until"]
    assert until["stopped"] == "precision"
    low, high = until["interval"]
    assert (high - low) / 2 <= 0.15
    means = _example_means(out.rows)
    assert len(means) < 300  # it stopped before the examples ran out
    # The examples run are the first ones of the seed's shuffle, and every one has both rollouts.
    order = list(range(300))
    random.Random(4).shuffle(order)
    assert sorted(means) == sorted(order[: len(means)])
    assert all(sum(1 for r in out.rows if r["example_id"] == e) == 2 for e in means)
    # The interval was fed the examples in draw order up to when it was narrow enough; those in
    # flight then finished too: at most max_concurrent more.
    fed = until["examples"]
    assert len(means) - 4 <= fed <= len(means)
    assert until["mean"] == pytest.approx(sum(means[e] for e in order[:fed]) / fed)
    assert low <= until["mean"] <= high


def test_when_the_examples_run_out_first_every_example_is_run(fake_server):
    out = _env(12).evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        until=vf.Precision(half_width=0.01),
        progress=False,
    )
    assert len(out) == 12
    assert out.metadata["until"]["stopped"] == "examples ran out"
    assert out.metadata["until"]["examples"] == 12


def test_a_resume_with_a_finer_precision_goes_on_where_the_run_stopped(fake_server, tmp_path):
    env, client = _env(400), vf.ChatClient(fake_server.base_url)

    def run(half_width: float):
        return env.evaluate_sync(
            client,
            "fake-arith",
            until=vf.Precision(half_width=half_width),
            results_path=tmp_path / "run",
            max_concurrent=2,
            progress=False,
        )

    coarse = run(0.25)
    first = {r["example_id"] for r in coarse.rows}
    assert coarse.metadata["until"]["stopped"] == "precision"
    requests = fake_server.stats()["requests"]
    finer = run(0.15)
    second = {r["example_id"] for r in finer.rows}
    assert first < second  # kept what it had, ran more
    assert fake_server.stats()["requests"] - requests == len(second - first)  # nothing rerun
    low, high = finer.metadata["until"]["interval"]
    assert (high - low) / 2 <= 0.15 or finer.metadata["until"]["stopped"] == "examples ran out"


def test_a_paired_run_stops_once_the_sign_of_the_difference_is_settled(fake_server):
    env, client = _env(400), vf.ChatClient(fake_server.base_url)
    fake_server.configure(correct_rate=0.1)
    base = env.evaluate_sync(client, "fake-arith", progress=False)
    fake_server.configure(correct_rate=0.9)
    out = env.evaluate_sync(
        client,
        "fake-arith",
        until=vf.Precision(half_width=0.01, baseline=base),
        max_concurrent=2,
        progress=False,
    )
    until = out.metadata["until"]
    assert until["rule"] == "paired precision" and until["stopped"] == "sign"
    assert until["interval"][0] > 0  # better than the baseline, settled
    assert len(out) < 100  # long before the examples ran out
    base_means = _example_means(base.rows)
    means = _example_means(out.rows)
    order = list(range(400))
    random.Random(0).shuffle(order)
    fed = order[: until["examples"]]
    assert until["mean"] == pytest.approx(sum(means[e] - base_means[e] for e in fed) / len(fed))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: vf.Precision(half_width=0), "Precision.half_width must be > 0"),
        (lambda: vf.Precision(half_width=0.1, confidence=1.0), "Precision.confidence"),
        (lambda: vf.Precision(half_width=0.1, reward_range=(1, 0)), "Precision.reward_range"),
    ],
)
def test_a_bad_precision_is_refused_when_made(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_until_of_the_wrong_kind_is_refused_before_any_request(fake_server):
    with pytest.raises(TypeError, match="RunConfig.until must be a vf.Precision"):
        _env(3).evaluate_sync(
            vf.ChatClient(fake_server.base_url), "fake-arith", until=0.02, progress=False
        )
    assert fake_server.stats()["requests"] == 0
