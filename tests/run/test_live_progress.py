"""Live progress: rollouts counted as they finish (before their group is scored), rollouts in
flight, a ticking clock, stop reasons everywhere a run is summarised, one-line interrupts."""

from __future__ import annotations

import io

import pytest

import verifiers_lite as vf
import verifiers_lite.ledger.run_ledger as run_ledger
from verifiers_lite.cli.report import format_table, run_summary
from verifiers_lite.core.progress import RunStats
from verifiers_lite.ui.terminal_progress import TqdmProgress


class Recorder:
    """Keeps (finished, in_flight, done, elapsed) at every update and the group events."""

    def __init__(self) -> None:
        self.updates: list[tuple[int, int, int, float]] = []
        self.groups: list[int] = []

    def on_update(self, stats: RunStats) -> None:
        self.updates.append((stats.finished, stats.in_flight, stats.done, stats.elapsed))

    def on_progress(self, stats: RunStats, rows: list) -> None:
        self.groups.append(stats.done)


def _env(n: int = 1):
    return vf.load_environment("arithmetic", num_examples=n)


def test_rollouts_are_counted_as_they_finish_within_one_group():
    rec = Recorder()
    # One group of 4; one request at a time, so its rollouts end one by one, 0.15 s apart.
    out = _env().evaluate_sync(
        vf.ScriptedClient("= 1", delay=0.15),
        "m",
        rollouts_per_example=4,
        max_concurrent=1,
        progress=False,
        callbacks=[rec],
    )
    assert len(out) == 4 and rec.groups == [4]
    before_group = [u for u in rec.updates if u[2] == 0]  # nothing recorded yet
    assert sorted({u[0] for u in before_group}) == [0, 1, 2, 3, 4]
    # All four started at once (waiting on the semaphore); each end leaves one fewer in flight.
    assert {3, 2, 1} <= {u[1] for u in before_group}
    assert rec.updates[-1][1] == 0


def test_clock_ticks_while_nothing_finishes(monkeypatch):
    monkeypatch.setattr(run_ledger, "TICK_SECONDS", 0.1)
    rec = Recorder()
    _env().evaluate_sync(vf.ScriptedClient("= 1", delay=0.8), "m", progress=False, callbacks=[rec])
    ticks = [u for u in rec.updates if u[0] == 0 and u[1] == 1]  # one rollout running, none ended
    assert len(ticks) >= 4
    elapsed = [u[3] for u in ticks]
    assert elapsed == sorted(elapsed) and elapsed[-1] - elapsed[0] >= 0.3


def _half_length(messages):
    q = messages[-1]["content"]
    return {"content": "= 1", "finish_reason": "length"} if int(q.split()[2]) % 2 else "= 1"


def test_stop_reasons_in_stats_summary_html_and_cli_table():
    env = _env(20)
    expected_length = sum(
        int(r["prompt"][-1]["content"].split()[2]) % 2 for r in env.get_eval_dataset()
    )
    assert 2 <= expected_length <= 18  # the data mixes both
    stats_seen: list[RunStats] = []
    out = env.evaluate_sync(
        vf.ScriptedClient(_half_length), "m", progress=False, on_start=stats_seen.append
    )
    s = out.summary
    assert s["stop_reasons"] == {"stop": 20 - expected_length, "length": expected_length} or s[
        "stop_reasons"
    ] == {"length": expected_length, "stop": 20 - expected_length}
    assert dict(stats_seen[0].stop_reasons) == s["stop_reasons"]
    warning = stats_seen[0].length_warning()
    assert warning and "max_tokens" in warning and f"{expected_length} of 20" in warning
    html = out._repr_html_()
    assert "Stop reasons" in html and "max_tokens" in html
    assert f"length={expected_length}" in repr(out)
    table = format_table(run_summary(out.rows, 1, 1.0), "t", {})
    assert (
        "stop reasons" in table and f"length {expected_length}" in table and "max_tokens" in table
    )


def test_no_length_warning_when_few_hit_the_limit():
    out = _env(20).evaluate_sync(vf.ScriptedClient("= 1"), "m", progress=False)
    assert out.summary["stop_reasons"] == {"stop": 20}
    assert "max_tokens" not in out._repr_html_()


def test_terminal_bar_counts_within_a_group_and_ticks(monkeypatch):
    monkeypatch.setattr(run_ledger, "TICK_SECONDS", 0.1)
    buf = io.StringIO()
    monkeypatch.setattr("sys.stderr", buf)
    bar = TqdmProgress("rollouts")
    _env().evaluate_sync(
        vf.ScriptedClient({"content": "= 1", "finish_reason": "length"}, delay=0.3),
        "m",
        rollouts_per_example=3,
        max_concurrent=1,
        progress=bar,
    )
    text = buf.getvalue()
    for n in (1, 2):  # drawn before the group (3) was scored
        assert f" {n}/3 " in text, text
    assert "running=" in text and "stop[length=3]" in text
    assert (
        "warning: 3 of 3 rollouts (100%) stopped at the token limit" in text
        and "max_tokens" in text
    )


def test_interrupt_raises_one_line_saying_what_was_saved(tmp_path):
    n = [0]

    def stop_after_two(stats, rows):
        n[0] += 1
        if n[0] == 2:
            raise KeyboardInterrupt

    env = _env(10)
    with pytest.raises(KeyboardInterrupt) as info:
        env.evaluate_sync(
            vf.ScriptedClient("= 1"),
            "m",
            rollouts_per_example=2,
            results_path=str(tmp_path),
            on_progress=stop_after_two,
            progress=False,
            max_concurrent=2,
        )
    err = info.value
    assert type(err).__name__ == "RunInterrupted"
    lines = err._render_traceback_()
    on_disk = len((tmp_path / "results.jsonl").read_text().splitlines())
    assert 4 <= on_disk < 20
    assert " ".join(lines) == str(err)  # the one message, broken between words only
    assert all(len(x) <= 88 or " " not in x for x in lines), lines
    assert f"{on_disk} of 20 rollouts are saved" in str(err) and str(tmp_path) in str(err)
    assert f"only the {20 - on_disk} missing rollouts run" in str(err)
    client = vf.ScriptedClient("= 1")
    out = env.evaluate_sync(
        client, "m", rollouts_per_example=2, results_path=str(tmp_path), progress=False
    )
    assert len(out) == 20 and client.requests == 20 - on_disk


def test_interrupt_without_results_path_says_nothing_was_saved(monkeypatch):
    def stop(stats, rows):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as info:
        _env(3).evaluate_sync(
            vf.ScriptedClient("= 1"), "m", on_progress=stop, progress=False, max_concurrent=1
        )
    assert "nothing was saved" in str(info.value) and "results_path" in str(info.value)
    monkeypatch.setenv("VF_DEBUG", "1")  # the full traceback instead of one line
    assert not hasattr(info.value, "_render_traceback_")
    assert info.value.__cause__ is None
