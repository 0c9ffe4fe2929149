"""evaluate_sync in a real Jupyter kernel: twice in one cell, on the background loop thread with
the widget still live, interrupted by a kernel interrupt and resumed, the kernel's own loop left
as it was."""

from __future__ import annotations

import json

import pytest

from verifiers_lite.testing.waiting import wait_until

pytestmark = pytest.mark.slow

SETUP = """
import json, threading
import verifiers_lite as vf
client = vf.ChatClient({url!r})
rows = [{{"question": f"What is {{i}} + {{i % 7}}?", "answer": str(i + i % 7)}} for i in range(40)]
def correct(completion, answer):
    return float(vf.extract_boxed_answer(completion[-1]["content"] or "") == answer)
env = vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric([correct]))
"""


def test_twice_in_one_cell_with_live_widget(kernel, fake_server):
    fake_server.configure(latency_ms=40)
    kernel.run(SETUP.format(url=fake_server.base_url))
    out = kernel.run(
        "from verifiers_lite.testing import loop_state\n"
        "before = loop_state.snapshot()\n"
        "a = env.evaluate_sync(client, 'fake-arith', num_examples=6, rollouts_per_example=2, max_concurrent=2)\n"
        "b = env.evaluate_sync(client, 'fake-arith', num_examples=6, rollouts_per_example=2, max_concurrent=2)\n"
        "print(len(a), len(b), a.summary['errors'], b.summary['errors'], "
        "loop_state.changes(before, loop_state.snapshot()))"
    )
    # ... and the kernel's own loop and asyncio are left as they were.
    assert out["stdout"].split() == ["12", "12", "{}", "{}", "[]"]
    assert sum("vf-progress" in h for h in out["html"]) == 2  # two final frames, one per run


def test_background_loop_thread_updates_the_widget_while_the_cell_runs(kernel, fake_server):
    """A cell runs inside the kernel's running loop: work and callbacks on the loop thread."""
    fake_server.configure(latency_ms=100)
    kernel.run(SETUP.format(url=fake_server.base_url))
    out = kernel.run(
        "threads = set()\n"
        "res = env.evaluate_sync(client, 'fake-arith', num_examples=8, rollouts_per_example=2, max_concurrent=2,\n"
        "                        on_progress=lambda stats, rows: threads.add(threading.current_thread().name))\n"
        "print(len(res), sorted(threads), threading.current_thread().name)"
    )
    n, loop_thread, cell_thread = out["stdout"].split()
    assert n == "16" and loop_thread == "['verifiers-lite-loop']" and cell_thread == "MainThread"
    values = [u["value"] for u in out["updates"] if isinstance(u.get("value"), int)]
    assert len(out["updates"]) >= 8 and any(0 < v < 16 for v in values), values
    assert values[-1] == 16


def test_interrupt_then_resume_with_results_path(kernel, fake_server, tmp_path):
    fake_server.configure(latency_ms=150)
    kernel.run(SETUP.format(url=fake_server.base_url))
    results = tmp_path / "run"
    call = (
        f"out = env.evaluate_sync(client, 'fake-arith', num_examples=20, rollouts_per_example=2, "
        f"max_concurrent=2, results_path={str(results)!r}, progress=False)"
    )
    msg_id = kernel.send(call)
    lines = results / "results.jsonl"
    wait_until(
        lambda: lines.exists() and len(lines.read_text().splitlines()) >= 6,
        "six rows saved",
        timeout=60,
    )
    kernel.interrupt()
    first = kernel.collect(msg_id)
    partial = len(lines.read_text().splitlines())
    assert 6 <= partial < 40
    # One message, no traceback through the event loop: what is saved, and how to resume,
    # broken into lines between words (never mid-word by the notebook's wrapping).
    note = " ".join(first["traceback"])
    assert first["error"] == "RunInterrupted" and not any(
        "File " in x for x in first["traceback"]
    ), first["traceback"]
    assert all(len(x) <= 88 or " " not in x for x in first["traceback"]), first["traceback"]
    assert f"{partial} of 40 rollouts are saved in {str(results)!r}" in note
    assert "run the same call again" in note and first["stderr"] == ""

    # The kernel is still usable, and the rerun only runs what is missing.
    fake_server.reset()
    n, status = kernel.run(call + "\nprint(len(out), out.metadata['status'])")["stdout"].split()
    assert (n, status) == ("40", "completed")
    assert fake_server.stats()["requests"] == 40 - partial  # only the missing groups ran
    rows = [json.loads(x) for x in lines.read_text().splitlines()]
    keys = [(r["example_id"], r["rollout_index"]) for r in rows]
    assert len(keys) == len(set(keys)) == 40
