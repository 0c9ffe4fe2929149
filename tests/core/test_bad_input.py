"""Bad input sweep (hypothesis): malformed datasets, messages, tool calls and env args give a
clear ValueError (or a tool message), never another exception."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import verifiers_lite as vf
from verifiers_lite.core.dataset import format_rows
from verifiers_lite.core.messages import normalize_messages

json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
roles = st.sampled_from(["user", "assistant", "system", "tool", "wizard", "", None])
messages = (
    st.lists(
        st.dictionaries(
            st.sampled_from(["role", "content", "tool_calls", "name"]),
            roles | json_values,
            max_size=4,
        )
        | json_values,
        max_size=4,
    )
    | json_values
)
rows = st.lists(
    st.dictionaries(
        st.sampled_from(["question", "prompt", "answer", "info", "task", "example_id"]),
        json_values | messages,
        max_size=6,
    )
    | json_values,
    max_size=5,
)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(rows)
def test_malformed_datasets_give_value_errors(data):
    try:
        out = vf.SingleTurnEnv(dataset=data).get_dataset()
    except ValueError as exc:
        assert "dataset" in str(exc) or "row" in str(exc)
    else:  # accepted rows are well formed
        for row in out:
            assert isinstance(row["example_id"], int) and isinstance(row["info"], dict)
            assert all(isinstance(m, dict) and "role" in m for m in row["prompt"])


@SETTINGS
@given(messages)
def test_malformed_messages_give_value_errors(msgs):
    try:
        out = normalize_messages(msgs, "prompt")
    except ValueError as exc:
        assert str(exc).startswith("prompt")
    else:
        assert all(
            isinstance(m, dict)
            and m["role"] in ("system", "developer", "user", "assistant", "tool")
            for m in out
        )


def calculator(expression: str) -> str:
    """Echo the expression."""
    return expression


tool_calls = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "id": json_values,
            "function": st.fixed_dictionaries(
                {},
                optional={
                    "name": st.sampled_from(["calculator", "nope"]) | json_values,
                    "arguments": json_values | st.text(max_size=30),
                },
            )
            | json_values,
        },
    ),
    max_size=3,
)


@SETTINGS
@given(tool_calls)
def test_malformed_tool_calls_become_tool_messages(calls):
    env = vf.ToolEnv(tools=[calculator])
    try:
        replies = asyncio.run(
            env.env_response([{"role": "assistant", "content": None, "tool_calls": calls}], {})
        )
    except Exception as exc:  # pragma: no cover - the failure we are looking for
        pytest.fail(f"tool call handling raised {exc!r} for {calls!r}")
    assert len(replies) == len(calls)
    assert all(r["role"] == "tool" and isinstance(r["content"], str) for r in replies)


@pytest.mark.parametrize(
    ("env_id", "kwargs", "match"),
    [
        ("no_such_env", {}, "unknown environment 'no_such_env'; available: "),
        ("", {}, "env_id must be a non-empty string"),
        ("arithmetic", {"not_an_arg": 1}, r"does not take \['not_an_arg'\]"),
    ],
)
def test_bad_env_ids_and_args_are_refused_clearly(env_id, kwargs, match):
    with pytest.raises(ValueError, match=match):
        vf.load_environment(env_id, **kwargs)


def test_format_rows_never_mutates_its_input():
    data = [{"question": "q", "info": '{"a": 1}'}]
    format_rows(data)
    assert data == [{"question": "q", "info": '{"a": 1}'}]


def test_is_registered_needs_a_load_environment_function():
    from verifiers_lite.core.registry import is_registered

    assert is_registered("arithmetic")
    assert is_registered("guess-number")  # dashes name the same module as underscores
    assert not is_registered("json")  # a module, but not an environment
    assert not is_registered("SingleTurnEnv")
