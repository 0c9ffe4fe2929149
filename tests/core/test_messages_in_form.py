"""The rollout path's shortcuts agree with the long way: messages checked in place, inputs
read once per example, trajectory ids, reward functions scored without a task each."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from verifiers_lite.core.dataset import FormattedRows, RepeatedInputs, input_in_form
from verifiers_lite.core.messages import messages_in_form, normalize_messages
from verifiers_lite.core.state import _uuid4_hex, new_state
from verifiers_lite.rubrics.rubric import Rubric


class _Dumped:
    def model_dump(self, exclude_none: bool = False) -> dict:
        return {"role": "user", "content": "hi"}


GOOD = [
    [{"role": "user", "content": "hi"}],
    [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text"}]}],
    [{"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]}],
    [],
]
NOT_IN_FORM = ["hi", ({"role": "user", "content": "hi"},), [_Dumped()]]
BAD = [
    [{"role": "user"}],
    [{"role": "robot", "content": "x"}],
    [{"content": "x"}],
    [{"role": "user", "content": 3}],
    [{"role": "user", "content": [{"text": "no type"}]}],
]


@pytest.mark.parametrize("messages", GOOD)
def test_in_form_when_normalizing_changes_nothing(messages: list) -> None:
    assert normalize_messages(messages) == messages
    assert messages_in_form(messages)


@pytest.mark.parametrize("messages", NOT_IN_FORM)
def test_not_in_form_when_normalizing_is_needed(messages: object) -> None:
    assert not messages_in_form(messages)
    assert normalize_messages(messages) == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("messages", BAD)
def test_a_bad_message_is_the_same_error_either_way(messages: list) -> None:
    with pytest.raises(ValueError) as long_way:
        normalize_messages(messages, "row 3")
    with pytest.raises(ValueError) as in_place:
        messages_in_form(messages, "row 3")
    assert str(in_place.value) == str(long_way.value)


def test_a_message_not_a_dict_is_left_to_normalizing_which_refuses_it() -> None:
    messages = [{"role": "user", "content": "ok"}, "not a dict"]
    assert not messages_in_form(messages)
    with pytest.raises(ValueError, match="message 1 must be a dict"):
        normalize_messages(messages)


def test_an_input_in_form_is_used_as_given_and_its_state_owns_a_copy() -> None:
    row = {"prompt": [{"role": "user", "content": "hi"}], "example_id": 4, "answer": "a"}
    assert input_in_form(row, 0)
    assert not input_in_form({**row, "prompt": "hi"}, 0)
    state = new_state(row, model="m", sampling_args=None, tool_defs=None)  # type: ignore[arg-type]
    assert state["prompt"] == row["prompt"]
    state["prompt"][0]["content"] = "changed"
    state["prompt"].append({"role": "assistant", "content": "x"})
    assert row["prompt"] == [{"role": "user", "content": "hi"}]


def test_a_state_normalizes_a_prompt_not_in_form() -> None:
    row = {"prompt": "hi", "example_id": 0}
    state = new_state(row, model="m", sampling_args=None, tool_defs=None)  # type: ignore[arg-type]
    assert state["prompt"] == [{"role": "user", "content": "hi"}]


def test_repeated_inputs_format_each_example_once_per_run_of_repeats() -> None:
    reads: list[int] = []

    class Counted(FormattedRows):
        def _at(self, i: int):  # type: ignore[no-untyped-def]
            reads.append(i)
            return super()._at(i)

    rows = [{"question": f"q{i}", "answer": str(i)} for i in range(3)]
    examples = Counted(rows)
    reads.clear()
    inputs = RepeatedInputs(examples, [2, 0, 1], 4)
    got = [inputs[i] for i in range(len(inputs))]
    assert reads == [2, 0, 1]
    assert [g["example_id"] for g in got] == [2] * 4 + [0] * 4 + [1] * 4
    assert got == [FormattedRows(rows)[e] for e in [2] * 4 + [0] * 4 + [1] * 4]
    assert inputs[0] == got[0] and inputs[-1] == got[-1]  # out of order too


def test_trajectory_ids_are_uuid4_hex() -> None:
    ids = {_uuid4_hex() for _ in range(1000)}
    assert len(ids) == 1000
    for h in ids:
        parsed = uuid.UUID(hex=h)
        assert parsed.hex == h and parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_async_reward_functions_still_run_together_and_plain_ones_fail_alone() -> None:
    started: list[int] = []
    both_started = asyncio.Event()

    async def slow(answer: str) -> float:
        started.append(int(answer))
        if len(started) == 2:
            both_started.set()
        await asyncio.wait_for(both_started.wait(), 5)  # deadlocks if awaited one by one
        return float(answer)

    def picky(answer: str) -> float:
        if answer == "1":
            raise RuntimeError("no")
        return 2.0

    rubric = Rubric([slow, picky])
    states = [
        {"answer": a, "completion": [], "prompt": [], "error": None, "metrics": {}}
        for a in ("1", "3")
    ]
    asyncio.run(rubric.score_group(states))  # type: ignore[arg-type]
    assert sorted(started) == [1, 3]
    assert states[1]["metrics"] == {"slow": 3.0, "picky": 2.0}
    assert states[0]["metrics"]["slow"] == 1.0 and states[0]["metrics"]["picky"] is None
    assert states[0]["error"] is not None and states[1]["error"] is None
