"""verifiers_lite.tools: schema from signatures, safe tool calls."""

from __future__ import annotations

import asyncio
import enum
import time
from typing import Literal

import pytest

from verifiers_lite.tools import ToolCallError, call_tool, function_to_schema, parse_docstring


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


def weather(city: str, days: int = 1, unit: Unit = Unit.C, detail: bool | None = None) -> str:
    """Get the weather forecast for a city.

    More detail that should not reach the model.

    Args:
        city: Name of the city,
            e.g. "Paris".
        days: Number of days.
        unit: Temperature unit.

    Returns:
        A forecast.
    """
    return f"{city}:{days}:{unit.value if isinstance(unit, Unit) else unit}"


def test_schema_from_signature_and_docstring() -> None:
    s = function_to_schema(weather)
    assert s["type"] == "function"
    f = s["function"]
    assert f["name"] == "weather"
    assert f["description"] == "Get the weather forecast for a city."
    props = f["parameters"]["properties"]
    assert props["city"] == {"type": "string", "description": 'Name of the city, e.g. "Paris".'}
    assert props["days"] == {"type": "integer", "description": "Number of days.", "default": 1}
    assert props["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert props["unit"]["default"] == "celsius"
    assert props["detail"] == {"type": "boolean", "default": None}
    assert f["parameters"]["required"] == ["city"]


def test_schema_containers_literal_and_varargs() -> None:
    def f(xs: list[int], mode: Literal["a", "b"], m: dict[str, int], *args: int, **kw: int) -> None:
        """Do it."""

    props = function_to_schema(f, name="g")["function"]
    assert props["name"] == "g"
    p = props["parameters"]["properties"]
    assert p["xs"] == {"type": "array", "items": {"type": "integer"}}
    assert p["mode"] == {"enum": ["a", "b"]}
    assert p["m"] == {"type": "object"}
    assert set(p) == {"xs", "mode", "m"}


def test_parse_docstring_numpy_dashes() -> None:
    desc, params = parse_docstring("Add.\n\nParameters\n----------\na : int\n    first\n")
    assert desc == "Add."


async def test_call_tool_sync_async_and_json_args() -> None:
    async def add(a: int, b: int) -> int:
        return a + b

    assert await call_tool(add, {"a": 1, "b": 2}) == "3"
    assert await call_tool(weather, '{"city": "Oslo", "days": 2}') == "Oslo:2:celsius"
    assert await call_tool(lambda: {"k": [1]}, None) == '{"k": [1]}'


async def test_call_tool_errors_become_text_or_raise() -> None:
    def boom() -> None:
        raise ValueError("nope")

    async def slow() -> str:
        await asyncio.sleep(5)
        return "late"

    def slow_sync() -> str:
        time.sleep(0.5)
        return "late"

    assert "bad_arguments" in await call_tool(weather, {"town": "x"})
    assert "bad_arguments" in await call_tool(weather, "{not json")
    assert "bad_arguments" in await call_tool(weather, "[1, 2]")
    assert "ValueError: nope" in await call_tool(boom, {})
    t0 = time.perf_counter()
    assert "timeout" in await call_tool(slow, {}, timeout=0.05)
    assert "timeout" in await call_tool(slow_sync, {}, timeout=0.05)
    assert time.perf_counter() - t0 < 1.0
    with pytest.raises(ToolCallError) as ei:
        await call_tool(boom, {}, raise_errors=True)
    assert ei.value.kind == "exception" and ei.value.tool == "boom"
