"""What model calls cost in US dollars: a price per million tokens of each kind, the table a run
prices its model from, and a rollout's cost from its usage.

A price applies to the token counts a row's ``usage`` keeps: prompt tokens less the cached ones
at ``input``, cached prompt tokens at ``cached_input``, completion tokens less the reasoning ones
at ``output``, reasoning tokens at ``reasoning``. Cost is linear in the counts, so a rollout's
cost is its summed usage priced once. A model with no known price is *unpriced*: its cost is
None (shown as "unpriced"), never 0.

The bundled table (:data:`BUNDLED_PRICES`, list prices as of :data:`BUNDLED_PRICES_DATE`) is
used only for a model the caller's table does not name; it is never fetched or updated at run
time. Give your own prices with ``prices={"my-model": vf.ModelPrice(input=..., output=...)}``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from verifiers_lite.core.records import Usage

__all__ = [
    "BUNDLED_PRICES",
    "BUNDLED_PRICES_DATE",
    "FREE",
    "ModelPrice",
    "PriceTable",
    "check_prices",
    "declared_price",
    "price_record",
    "resolve_price",
    "usage_cost",
]


@dataclass(frozen=True, kw_only=True)
class ModelPrice:
    """US dollars per million tokens. ``cached_input`` defaults to ``input`` and ``reasoning``
    to ``output`` (how providers bill them when they do not discount)."""

    input: float  #: uncached prompt tokens
    output: float  #: completion tokens that are not reasoning
    cached_input: float | None = None  #: prompt tokens the provider served from its cache
    reasoning: float | None = None  #: completion tokens spent reasoning

    def __post_init__(self) -> None:
        for name in ("input", "output", "cached_input", "reasoning"):
            value = getattr(self, name)
            if value is None and name in ("cached_input", "reasoning"):
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"ModelPrice.{name} must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"ModelPrice.{name} must be a finite number >= 0, got {value!r}")

    @classmethod
    def of(cls, value: ModelPrice | Mapping[str, Any]) -> ModelPrice:
        """A price from a :class:`ModelPrice` or a dict of its fields (as a config file has it)."""
        if isinstance(value, ModelPrice):
            return value
        if not isinstance(value, Mapping):
            raise TypeError(
                f"a price must be a ModelPrice or a dict of its fields, got {type(value).__name__}"
            )
        unknown = sorted(set(value) - {"input", "output", "cached_input", "reasoning"})
        if unknown:
            raise ValueError(
                f"unknown price field(s) {', '.join(map(repr, unknown))}; the fields are input, "
                "output, cached_input, reasoning (USD per million tokens)"
            )
        if "input" not in value or "output" not in value:
            raise ValueError("a price needs 'input' and 'output' (USD per million tokens)")
        return cls(**value)


PriceTable = Mapping[str, ModelPrice | Mapping[str, Any]]
"""Model name -> its price (a :class:`ModelPrice` or a dict of its fields)."""

FREE = ModelPrice(input=0.0, output=0.0)
"""A model that costs nothing per token (the embedded model, any model served locally)."""

BUNDLED_PRICES_DATE = "2025-07-01"
"""The date the list prices of :data:`BUNDLED_PRICES` were read from the providers' pages."""

BUNDLED_PRICES: Mapping[str, ModelPrice] = {
    "gpt-4o": ModelPrice(input=2.50, cached_input=1.25, output=10.00),
    "gpt-4o-mini": ModelPrice(input=0.15, cached_input=0.075, output=0.60),
    "gpt-4.1": ModelPrice(input=2.00, cached_input=0.50, output=8.00),
    "gpt-4.1-mini": ModelPrice(input=0.40, cached_input=0.10, output=1.60),
    "gpt-4.1-nano": ModelPrice(input=0.10, cached_input=0.025, output=0.40),
    "o3": ModelPrice(input=2.00, cached_input=0.50, output=8.00),
    "o4-mini": ModelPrice(input=1.10, cached_input=0.275, output=4.40),
    "claude-opus-4-0": ModelPrice(input=15.00, cached_input=1.50, output=75.00),
    "claude-sonnet-4-0": ModelPrice(input=3.00, cached_input=0.30, output=15.00),
    "claude-3-5-haiku-latest": ModelPrice(input=0.80, cached_input=0.08, output=4.00),
    "deepseek-chat": ModelPrice(input=0.27, cached_input=0.07, output=1.10),
    "deepseek-reasoner": ModelPrice(input=0.55, cached_input=0.14, output=2.19),
}
"""List prices of some well-known hosted models (USD per million tokens, as of
:data:`BUNDLED_PRICES_DATE`); a run uses one only when the caller's table does not name the model."""


def check_prices(prices: PriceTable | None) -> dict[str, ModelPrice] | None:
    """The caller's price table with every entry a :class:`ModelPrice`; a bad entry is an error
    naming its model."""
    if prices is None:
        return None
    if not isinstance(prices, Mapping):
        raise TypeError(
            f"prices must be a dict of model name -> ModelPrice, got {type(prices).__name__}"
        )
    out: dict[str, ModelPrice] = {}
    for model, value in prices.items():
        try:
            out[str(model)] = ModelPrice.of(value)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"prices[{model!r}]: {exc}") from exc
    return out


def resolve_price(
    model: str, prices: PriceTable | None = None, declared: ModelPrice | None = None
) -> tuple[ModelPrice | None, str | None]:
    """The price of ``model`` and where it came from: the caller's table first (``"prices"``),
    then what the endpoint declares (``"endpoint"``; the embedded model: :data:`FREE`), then the
    bundled table (``"bundled <date>"``); ``(None, None)`` when none names it."""
    table = check_prices(prices) or {}
    if model in table:
        return table[model], "prices"
    if declared is not None:
        return declared, "endpoint"
    if model in BUNDLED_PRICES:
        return BUNDLED_PRICES[model], f"bundled {BUNDLED_PRICES_DATE}"
    return None, None


def price_record(model: str, price: ModelPrice | None, source: str | None) -> dict[str, Any]:
    """How a run's rows were priced, as its metadata keeps it (``pricing``)."""
    fields = None if price is None else dataclasses.asdict(price)
    return {"model": model, "price": fields, "source": source}


def declared_price(client: object) -> ModelPrice | None:
    """The price a client (or every client of a list) declares as its ``price``; None when
    none does, or when the endpoints of a list declare different ones."""
    if isinstance(client, (list, tuple)):
        prices = {declared_price(c) for c in client}
        return prices.pop() if len(prices) == 1 else None
    price = getattr(client, "price", None)
    return price if isinstance(price, ModelPrice) else None


def usage_cost(usage: Usage | Mapping[str, Any], price: ModelPrice | None) -> float | None:
    """US dollars of ``usage`` at ``price`` (None when unpriced). Cached tokens are a part of the
    prompt tokens and reasoning tokens a part of the completion tokens, as servers report them."""
    if price is None:
        return None
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    cached = min(int(usage.get("cached_prompt_tokens") or 0), prompt)
    reasoning = min(int(usage.get("reasoning_tokens") or 0), completion)
    cached_rate = price.input if price.cached_input is None else price.cached_input
    reasoning_rate = price.output if price.reasoning is None else price.reasoning
    total = (
        (prompt - cached) * price.input
        + cached * cached_rate
        + (completion - reasoning) * price.output
        + reasoning * reasoning_rate
    )
    return total / 1_000_000
