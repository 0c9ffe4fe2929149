"""The JSON fast paths (pydantic's Rust parser/serialiser) give what the json module gives."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers_lite.remote.transport import dumps, loads
from verifiers_lite.server.bodies import _loads

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False)
)
values = st.recursive(
    scalars,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(), kids, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_request_bodies_encode_to_the_same_json(value: Any) -> None:
    assert json.loads(dumps(value)) == json.loads(json.dumps(value))


@settings(max_examples=300, deadline=None)
@given(values, st.booleans())
def test_bodies_and_answers_decode_as_json_does(value: Any, ascii_only: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert loads(raw) == json.loads(raw)
    assert _loads(raw) == json.loads(raw)


@pytest.mark.parametrize("value", [math.nan, {"a": [math.inf]}, {"x": -math.inf}])
def test_nan_and_infinity_are_refused_before_sending(value: Any) -> None:
    with pytest.raises(ValueError):
        dumps(value)


def test_strings_that_spell_nan_are_sent_as_strings() -> None:
    assert json.loads(dumps({"NaN": "Infinity", "n": 1.5})) == {"NaN": "Infinity", "n": 1.5}


def test_what_the_fast_parser_refuses_falls_back_to_python_json() -> None:
    # NaN literals (Python's json reads them; the validators then refuse them with a 422),
    # UTF-16 bodies, and lone surrogates all parse as before.
    assert math.isnan(_loads(b'{"t": NaN}')["t"])
    assert _loads(json.dumps({"k": "v"}).encode("utf-16")) == {"k": "v"}
    assert _loads(b'"\\ud800"') == "\ud800"
    with pytest.raises(json.JSONDecodeError):
        _loads(b'{"a": ')
    with pytest.raises(TypeError):
        dumps({"a": object()})
