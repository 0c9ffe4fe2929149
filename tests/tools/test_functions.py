"""verifiers_lite.tools.functions: schema from signatures, safe tool calls."""

from __future__ import annotations

import asyncio
import enum
import threading
from typing import Literal

import pydantic
import pytest

from verifiers_lite.tools.functions import (
    ToolCallFailed,
    call_tool,
    function_to_schema,
    parse_docstring,
)


class Point(pydantic.BaseModel):
    x: float
    y: float = 0.0


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
    assert p["mode"] == {"enum": ["a", "b"], "type": "string"}
    assert p["m"] == {"type": "object", "additionalProperties": {"type": "integer"}}
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

    never = asyncio.Event()
    release = threading.Event()

    async def slow() -> str:
        await never.wait()
        return "late"

    def slow_sync() -> str:
        release.wait(30)
        return "late"

    assert "bad_arguments" in await call_tool(weather, {"town": "x"})
    assert "bad_arguments" in await call_tool(weather, "{not json")
    assert "bad_arguments" in await call_tool(weather, "[1, 2]")
    assert "ValueError: nope" in await call_tool(boom, {})
    # Both return at their timeout while the tool is still blocked (the outer bound only
    # keeps a broken timeout from hanging the suite).
    assert "timeout" in await asyncio.wait_for(call_tool(slow, {}, timeout=0.05), 30)
    assert "timeout" in await asyncio.wait_for(call_tool(slow_sync, {}, timeout=0.05), 30)
    release.set()  # let the abandoned worker thread finish
    with pytest.raises(ToolCallFailed) as ei:
        await call_tool(boom, {}, raise_errors=True)
    assert ei.value.kind == "exception" and ei.value.tool == "boom"


GOOGLE = """Add two numbers
given as integers.

Args:
    a (int): The first
        number.
    b: The second.

Returns:
    The sum.
"""
NUMPY = """Add two numbers given as integers.

Parameters
----------
a : int
    The first
    number.
b : int, optional
    The second.

Returns
-------
int
"""
REST = """Add two numbers given as integers.

:param a: The first
    number.
:param b: The second.
:returns: The sum.
"""


@pytest.mark.parametrize("doc", [GOOGLE, NUMPY, REST], ids=["google", "numpy", "rest"])
def test_docstring_styles_give_the_same_descriptions(doc: str) -> None:
    def add(a: int, b: int = 0) -> int:
        return a + b

    add.__doc__ = doc
    f = function_to_schema(add)["function"]
    assert f["description"] == "Add two numbers given as integers."
    props = f["parameters"]["properties"]
    assert props["a"] == {"type": "integer", "description": "The first number."}
    assert props["b"] == {"type": "integer", "default": 0, "description": "The second."}
    assert f["parameters"]["required"] == ["a"]


def test_nested_models_are_inlined_and_names_may_shadow_pydantic() -> None:
    def move(json: Point, copy: int = 1, _scale: float = 1.0) -> str:
        """Move."""
        return f"{json.x},{json.y},{copy},{_scale}"

    p = function_to_schema(move)["function"]["parameters"]
    assert (
        "$defs" not in json_text(p) and "$ref" not in json_text(p) and "title" not in json_text(p)
    )
    assert p["properties"]["json"] == {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number", "default": 0.0}},
        "required": ["x"],
    }
    assert set(p["properties"]) == {"json", "copy", "_scale"} and p["required"] == ["json"]


def json_text(obj: object) -> str:
    import json

    return json.dumps(obj)


async def test_arguments_are_validated_and_converted() -> None:
    seen: dict[str, object] = {}

    def f(n: int, unit: Unit = Unit.C, tags: list[str] | None = None) -> str:
        seen.update(n=n, unit=unit, tags=tags)
        return "ok"

    assert await call_tool(f, {"n": "3", "unit": "fahrenheit"}) == "ok"
    assert seen == {"n": 3, "unit": Unit.F, "tags": None}  # "3" -> 3, value -> enum member


async def test_bad_arguments_name_every_problem_before_the_call() -> None:
    calls: list[int] = []

    def f(n: int, unit: Unit = Unit.C) -> str:
        calls.append(n)
        return "ok"

    with pytest.raises(ToolCallFailed) as ei:
        await call_tool(f, {"n": "three", "unit": "kelvin", "extra": 1}, raise_errors=True)
    msg = str(ei.value)
    assert ei.value.kind == "bad_arguments"
    assert "n: " in msg and "'three'" in msg
    assert "unit: " in msg and "'kelvin'" in msg
    assert "extra: unexpected argument" in msg
    text = await call_tool(f, {})
    assert (
        text.startswith("Error (bad_arguments) calling tool 'f'")
        and "n: missing required argument" in text
    )
    assert calls == []


async def test_kwargs_and_unknown_types_accept_anything() -> None:
    class Opaque:
        pass

    def f(thing: Opaque, **extra: int) -> str:
        return f"{thing}|{sorted(extra.items())}"

    schema = function_to_schema(f)["function"]["parameters"]
    assert schema["properties"] == {"thing": {}} and schema["required"] == ["thing"]
    assert await call_tool(f, {"thing": 5, "k": 1}) == "5|[('k', 1)]"


async def test_bound_methods_are_tools_without_self() -> None:
    class Counter:
        def __init__(self) -> None:
            self.total = 0

        def add(self, n: int) -> int:
            """Add n.

            Args:
                n: How much.
            """
            self.total += n
            return self.total

    a, b = Counter(), Counter()
    assert function_to_schema(a.add)["function"]["parameters"] == {
        "type": "object",
        "properties": {"n": {"type": "integer", "description": "How much."}},
        "required": ["n"],
    }
    assert await call_tool(a.add, {"n": "2"}) == "2" and await call_tool(b.add, {"n": 5}) == "5"
    assert (a.total, b.total) == (2, 5)
