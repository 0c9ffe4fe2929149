"""The live widget in a real kernel: counts move within a group, the clock ticks, the final
frame shows stop reasons, and an interrupt with VF_DEBUG shows the full traceback."""

from __future__ import annotations

import re

import pytest

from verifiers_lite.testing.waiting import wait_until

pytestmark = pytest.mark.slow

SETUP = """
import itertools
import verifiers_lite as vf
env = vf.load_environment("arithmetic", num_examples=1)
turn = itertools.count()
def slow_model(messages):  # every other rollout hits the token limit
    return {"content": "= 1", "finish_reason": "length" if next(turn) % 2 else "stop"}
"""


def test_widget_moves_within_one_group_and_its_clock_ticks(kernel):
    kernel.run(SETUP)
    # One group of 4 rollouts, one request at a time, 0.9 s each: about 3.6 s before it is scored.
    out = kernel.run(
        "out = env.evaluate_sync(vf.ScriptedClient(slow_model, delay=0.9), 'm', "
        "rollouts_per_example=4, max_concurrent=1)\nprint(out.summary['stop_reasons'])"
    )
    values = [u.get("value") for u in out["updates"]]
    counts = [v for v in values if isinstance(v, str) and re.fullmatch(r"\d+/4", v)]
    assert counts == ["0/4", "1/4", "2/4", "3/4", "4/4"], counts  # each rollout counted as it ended
    scored = next(i for i, v in enumerate(values) if isinstance(v, str) and "reward histogram" in v)
    assert values.index("3/4") < scored  # ... before its group was scored
    figures = [
        u["value"]
        for u in out["updates"]
        if isinstance(u.get("value"), str) and "rollouts/s" in u["value"]
    ]
    seconds = [int(m.group(1)) for f in figures for m in [re.search(r"elapsed (\d+)s", f)] if m]
    # The elapsed time moved on during the group (>= 3.6 s): by ticks and ends, never backwards.
    assert seconds == sorted(seconds) and len(set(seconds) - {0}) >= 3, figures
    assert any("3 running" in f or "4 running" in f for f in figures)  # in flight, shown live
    assert len(out["updates"]) >= 3
    final = [h for h in out["html"] if "vf-progress" in h][-1]
    assert "stop reasons: length 2, stop 2" in final and "max_tokens" in final
    assert out["stdout"].strip() in ("{'length': 2, 'stop': 2}", "{'stop': 2, 'length': 2}")


def test_interrupt_with_vf_debug_shows_the_full_traceback(kernel, tmp_path):
    kernel.run(SETUP + "import os, pathlib\nos.environ['VF_DEBUG'] = '1'\n")
    started = tmp_path / "started"
    msg_id = kernel.send(
        "env.evaluate_sync(vf.ScriptedClient('= 1', delay=60), 'm', progress=False, "
        "on_start=lambda stats: pathlib.Path('started').touch())"
    )
    wait_until(started.exists, "the run started in the kernel", timeout=60)
    kernel.interrupt()
    res = kernel.collect(msg_id)
    assert res["error"] == "RunInterrupted"
    text = "".join(res["traceback"])
    assert len(res["traceback"]) > 3 and "nothing was saved" in text and "KeyboardInterrupt" in text
