"""Every input is validated before the first model request, and recording a failure never fails."""

from __future__ import annotations

import pytest

import verifiers_lite as vf
from tests.helpers.envs import make_env
from verifiers_lite.core.messages import normalize_messages
from verifiers_lite.executors.base import WorkUnit
from verifiers_lite.run.scheduler import _failed_rows

GOOD = [
    {"prompt": [{"role": "user", "content": f"What is {i} + 1?"}], "answer": str(i + 1)}
    for i in range(30)
]


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        ({"prompt": {"role": "user", "content": "hi"}}, "expected a list of messages, got dict"),
        ({"prompt": [{"role": "wizard", "content": "hi"}]}, "unknown role 'wizard'"),
        ({"prompt": [{"role": "user", "content": 7}]}, "content of type int"),
        ({"prompt": [{"role": "user", "content": None}]}, "(user) has content None"),
    ],
)
def test_bad_row_after_good_ones_fails_before_any_request(fake_server, tmp_path, bad, needle):
    rows = [*GOOD, {**bad, "answer": "1"}, *GOOD[:3]]
    env = make_env(2)
    with pytest.raises(ValueError, match=r"inputs row 30, field 'prompt'") as info:
        env.generate_sync(
            rows,
            vf.ChatClient(fake_server.base_url),
            "fake-arith",
            results_path=str(tmp_path / "r"),
            progress=False,
        )
    assert needle in str(info.value)
    assert fake_server.stats()["requests"] == 0
    assert not (tmp_path / "r" / "results.jsonl").exists()


def test_assistant_tool_call_turn_may_have_no_content():
    msgs = normalize_messages(
        [
            {"role": "user", "content": "2+2?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
                ],
            },
        ]
    )
    assert msgs[1]["content"] is None


def test_recording_a_failure_never_raises():
    """A unit whose input cannot even be laid out still becomes error rows, one per rollout."""
    unit = WorkUnit(3, [{"example_id": 3, "prompt": 5, "answer": None}] * 2, [0, 1])
    with pytest.raises(ValueError):
        normalize_messages(5)  # what laying out a state from this input runs into
    rows = _failed_rows(make_env(1), unit, "m", None, RuntimeError("worker died"))
    assert [(r["example_id"], r["rollout_index"]) for r in rows] == [(3, 0), (3, 1)]
    assert all(
        r["error"]["category"] == "env_error" and "worker died" in r["error"]["message"]
        for r in rows
    )
