"""A run's cost in US dollars: usage read completely from the server's answers (cached prompt
tokens, reasoning tokens, a provider's own fields) and priced per row, checked against costs
worked out by hand from the fake server's counting rule (a token per word; an answer one more
than its words)."""

from __future__ import annotations

import pytest

import verifiers_lite as vf
from verifiers_lite.core.pricing import BUNDLED_PRICES_DATE, FREE, ModelPrice

# USD per million tokens, chosen so that every kind of token has its own rate.
PRICE = ModelPrice(input=1.5, cached_input=0.3, output=6.0, reasoning=9.0)
PROMPTS = ["alpha beta gamma", "one two three four five six seven"]


def _echo_env() -> vf.SingleTurnEnv:
    return vf.SingleTurnEnv(
        dataset=[{"prompt": [{"role": "user", "content": p}], "answer": ""} for p in PROMPTS],
        rubric=vf.Rubric([lambda completion: 1.0]),
    )


def _configure_usage(server) -> None:
    # 4 prompt tokens served from the cache (at most the prompt's own), 3 of the answer's
    # tokens spent reasoning, and a provider's own fields (a number and a nested count).
    server.configure(
        cached_tokens=4,
        usage_extra={
            "credits": 12.5,
            "completion_tokens_details": {"reasoning_tokens": 3, "audio_tokens": 1},
        },
    )


def test_rows_are_priced_from_the_callers_table_to_the_nanodollar(fake_server):
    _configure_usage(fake_server)
    out = _echo_env().evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-echo",
        rollouts_per_example=2,
        prices={"fake-echo": PRICE},
        progress=False,
    )
    by_example = {r["example_id"]: r for r in out.rows}
    # "alpha beta gamma": 3 prompt tokens, all 3 cached; answer 3 words + 1 = 4 tokens, 3 of
    # them reasoning: 0*1.5 + 3*0.3 + 1*6.0 + 3*9.0 = 33.9 per million.
    # The seven-word prompt: 7 tokens, 4 cached; 8 answer tokens, 3 reasoning:
    # 3*1.5 + 4*0.3 + 5*6.0 + 3*9.0 = 62.7 per million.
    assert by_example[0]["usage"] == {
        "prompt_tokens": 3,
        "completion_tokens": 4,
        "reasoning_tokens": 3,
        "cached_prompt_tokens": 3,
        "extra": {"credits": 12.5, "completion_tokens_details.audio_tokens": 1},
    }
    assert by_example[1]["usage"]["cached_prompt_tokens"] == 4
    costs = sorted((r["example_id"], r["cost_usd"]) for r in out.rows)
    expected = [(0, 33.9e-6), (0, 33.9e-6), (1, 62.7e-6), (1, 62.7e-6)]
    for (eid, cost), (want_eid, want) in zip(costs, expected, strict=True):
        assert eid == want_eid and cost == pytest.approx(want, abs=1e-9)
    assert out.metadata["pricing"] == {
        "model": "fake-echo",
        "price": {"input": 1.5, "output": 6.0, "cached_input": 0.3, "reasoning": 9.0},
        "source": "prices",
    }
    assert out.to_pandas()["cost_usd"].sum() == pytest.approx(2 * (33.9 + 62.7) * 1e-6, abs=1e-9)


def test_a_model_without_a_price_is_unpriced_never_free(fake_server):
    out = _echo_env().evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-echo", progress=False
    )
    assert [r["cost_usd"] for r in out.rows] == [None, None]
    assert out.metadata["pricing"] == {"model": "fake-echo", "price": None, "source": None}


def test_the_bundled_table_prices_a_well_known_model_and_says_its_date():
    # A run can no longer name gpt-4o against the fake server (it answers unknown models 404, as
    # vLLM does), so the bundled table is checked where a run looks its price up.
    from verifiers_lite.core.pricing import resolve_price, usage_cost

    price, source = resolve_price("gpt-4o")
    assert source == f"bundled {BUNDLED_PRICES_DATE}"
    # gpt-4o's list price: 2.50 input, 10.00 output per million
    assert (price.input, price.output) == (2.50, 10.00)
    cost = usage_cost({"prompt_tokens": 3, "completion_tokens": 5}, price)
    assert cost == pytest.approx((3 * 2.50 + 5 * 10.00) / 1e6, abs=1e-12)
    assert resolve_price("gpt-4o", {"gpt-4o": {"input": 1.0, "output": 1.0}})[1] == "prices"


def test_an_endpoint_that_declares_itself_free_costs_zero_and_the_callers_table_wins(
    fake_server,
):
    env = _echo_env()
    free = vf.ChatClient(fake_server.base_url, price=FREE)  # as the embedded model's servers
    out = env.evaluate_sync(free, "fake-echo", progress=False)
    assert [r["cost_usd"] for r in out.rows] == [0.0, 0.0]
    assert out.metadata["pricing"]["source"] == "endpoint"
    priced = env.evaluate_sync(
        free, "fake-echo", prices={"fake-echo": {"input": 1.0, "output": 2.0}}, progress=False
    )
    row = next(r for r in priced.rows if r["example_id"] == 0)
    assert row["cost_usd"] == pytest.approx((3 * 1.0 + 4 * 2.0) / 1e6, abs=1e-12)


def test_the_embedded_models_client_declares_it_free():
    from verifiers_lite.local.supervisor import LocalModel

    assert LocalModel().client().price == FREE  # a client of the (unstarted) server


@pytest.mark.parametrize(
    ("prices", "message"),
    [
        ({"m": {"input": 1.0}}, "prices['m']: a price needs 'input' and 'output'"),
        ({"m": {"input": 1.0, "output": -2.0}}, "ModelPrice.output must be a finite number >= 0"),
        ({"m": {"input": 1.0, "output": 2.0, "cache": 1.0}}, "unknown price field(s) 'cache'"),
        (["m"], "prices must be a dict"),
    ],
)
def test_a_bad_price_table_is_refused_before_any_request(fake_server, prices, message):
    with pytest.raises((TypeError, ValueError), match=r"RunConfig\.") as err:
        _echo_env().evaluate_sync(
            vf.ChatClient(fake_server.base_url), "fake-echo", prices=prices, progress=False
        )
    assert message in str(err.value)
    assert fake_server.stats()["requests"] == 0
