"""A program's calls as a row stores them: each call's new messages only, every request whole
again on read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import verifiers_lite as vf
from tests.programs.helpers import agent, program_env
from verifiers_lite.core.state import row_to_state
from verifiers_lite.core.trajectory import model_calls

ANSWER = "an answer of a fixed length, so that each call adds the same"


def _run(tmp_path: Path, calls: int) -> tuple[dict[str, Any], list[Any], int]:
    """The saved row of a ``calls``-call conversation, the requests the program itself sent,
    and the size of its stored calls."""
    sent_file = tmp_path / f"sent-{calls}.json"
    env = program_env(agent("long", str(calls), str(sent_file)))
    out = env.evaluate_sync(
        vf.ScriptedClient(ANSWER), "m", progress=False, results_path=tmp_path / f"run-{calls}"
    )
    row = vf.load_results(tmp_path / f"run-{calls}").rows[0]
    assert row["error"] is None, row["error"]
    assert out.rows[0]["turns"] == calls
    size = len(json.dumps(row["env_state"]["program_calls"]))
    return dict(row), json.loads(sent_file.read_text()), size


def test_stored_calls_grow_linearly_and_read_back_whole(tmp_path: Path) -> None:
    sizes = {}
    for calls in (10, 20, 40):
        row, sent, sizes[calls] = _run(tmp_path, calls)
        read = model_calls(row)
        assert [c["request"]["messages"] for c in read] == sent  # what the program sent, exactly
        assert [c["message"]["content"] for c in read] == [ANSWER] * calls
        # A re-score's State holds them whole too.
        state = row_to_state(row, model="m", sampling_args=None)  # type: ignore[arg-type]
        assert [c["request"]["messages"] for c in state["program_calls"]] == sent
    # Whole requests would grow with the square of the calls (the 20 calls from 20 to 40 would
    # cost about three times the 10 from 10 to 20, per call); new messages only, alike.
    first, second = sizes[20] - sizes[10], sizes[40] - sizes[20]
    assert 1.7 < second / first < 2.3, sizes
    whole = len(json.dumps(sent))  # the requests alone, stored whole
    assert sizes[40] < whole / 4, (sizes[40], whole)
