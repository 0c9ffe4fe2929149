import asyncio
import sys
import threading
import time

import pytest

from verifiers_lite.core import progress
from verifiers_lite.core.progress import CallbackSet, RunStats, default_progress
from verifiers_lite.testing.clock import ManualClock
from verifiers_lite.testing.waiting import wait_until
from verifiers_lite.ui.notebook import cells, detect, display
from verifiers_lite.ui.notebook.display import NotebookProgress, notebook_progress
from verifiers_lite.ui.terminal_progress import TqdmProgress


def _shell(name: str, kernel: bool = True):
    cls = type(name, (), {})
    obj = cls()
    obj.config = {"IPKernelApp": {}} if kernel else {}
    return obj


def test_scripts_get_no_widget(monkeypatch):
    monkeypatch.delenv("VF_PROGRESS", raising=False)
    assert detect.in_jupyter_kernel() is False
    assert notebook_progress() is None
    assert isinstance(default_progress(), TqdmProgress)


def test_default_progress_is_silent_when_no_display_is_registered(monkeypatch):
    monkeypatch.setattr(progress, "_DISPLAY_FACTORIES", [])
    shown = default_progress()
    assert isinstance(shown, CallbackSet) and shown.callbacks == []


def test_a_registered_display_that_applies_comes_before_the_terminal_bar(monkeypatch):
    mine = CallbackSet([])
    monkeypatch.setattr(progress, "_DISPLAY_FACTORIES", list(progress._DISPLAY_FACTORIES))
    progress._DISPLAY_FACTORIES.insert(0, lambda desc: None)  # does not apply: the next is tried
    progress._DISPLAY_FACTORIES.insert(1, lambda desc: mine)
    assert default_progress() is mine


@pytest.mark.parametrize(
    ("name", "kernel", "qt", "expected"),
    [
        ("TerminalInteractiveShell", False, False, False),  # plain IPython
        ("InProcessInteractiveShell", True, False, False),  # in-process qtconsole
        ("ZMQInteractiveShell", True, True, False),  # qtconsole's own kernel
        ("ZMQInteractiveShell", False, False, False),  # a ZMQ shell outside IPKernelApp
        ("ZMQInteractiveShell", True, False, True),  # Lab, Notebook, VS Code, nbclient
    ],
)
def test_detection(monkeypatch, name, kernel, qt, expected):
    import IPython

    monkeypatch.setattr(IPython, "get_ipython", lambda: _shell(name, kernel))
    monkeypatch.setattr(detect, "_parent_is_qtconsole", lambda: qt)
    assert detect.in_jupyter_kernel() is expected


def test_a_warning_shown_in_a_cell_is_known_there_only(monkeypatch):
    """The cell a display showed a warning in is told apart from the next, and outside IPython
    nothing is noted (the results' HTML then always shows the warning)."""
    import IPython

    monkeypatch.setattr(cells, "_SHOWN_IN_CELL", {})
    shell = _shell("ZMQInteractiveShell")
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    shell.execution_count = 3
    cells.note_shown("too long")
    assert cells.shown_in_this_cell("too long") and not cells.shown_in_this_cell("other")
    shell.execution_count = 4
    assert not cells.shown_in_this_cell("too long")
    monkeypatch.delitem(sys.modules, "IPython")  # a script: no cell
    cells.note_shown("in a script")
    assert cells._SHOWN_IN_CELL == {"too long": 3}
    assert not cells.shown_in_this_cell("in a script")


def test_override_and_missing_ipywidgets_hint(monkeypatch, capsys):
    monkeypatch.setenv("VF_PROGRESS", "none")
    assert isinstance(notebook_progress(), display.SilentProgress)
    monkeypatch.setenv("VF_PROGRESS", "text")
    assert notebook_progress() is None
    monkeypatch.setenv("VF_PROGRESS", "widget")
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # as if not installed
    monkeypatch.setattr(display, "_hint_shown", False)
    assert notebook_progress() is None
    assert notebook_progress() is None
    err = capsys.readouterr().err
    assert err.count("pip install 'verifiers_lite[notebook]'") == 1 and err.count("\n") == 1


def _rows(n, reward=1.0, error=None):
    return [{"reward": reward, "error": error} for _ in range(n)]


def test_widget_figures_and_final_state():
    p = NotebookProgress("eval", show=False, min_interval=0)
    stats = RunStats(total=6)
    p.on_start(stats)
    assert p.bar.value == 0 and p.count.value == "0/6" and "mean reward —" in p.figures.value
    for i, reward in enumerate((1.0, 0.0, 1.0)):
        stats.add([{"example_id": i, "reward": reward, "error": None}])
        p.on_progress(stats, [])
    # Three examples, one rollout each: sd 0.577 / √3 = 0.333; 95% CI ± t(0.975; 2) = 4.303 × that.
    assert (
        p.bar.value == 3 and "mean reward 0.667 ± 0.333 (95% CI [-0.768, 2.101])" in p.figures.value
    )
    assert "reward histogram · 3 rollouts" in p.hist.value
    stats.add(_rows(2) + _rows(1, 0.0, {"category": "timeout", "message": "x"}))
    p.on_progress(stats, [])
    p.on_end(stats)
    assert p.bar.value == 6 and p.bar.bar_style == "warning" and "timeout 1" in p.figures.value
    assert "ETA" not in p.figures.value and "rollouts/s" in p.figures.value


@pytest.mark.parametrize(
    ("done", "errors", "style"), [(4, 0, "success"), (2, 0, "danger"), (4, 4, "danger")]
)
def test_final_bar_style(done, errors, style):
    p = NotebookProgress(show=False)
    stats = RunStats(total=4)
    p.on_start(stats)
    stats.add(_rows(done - errors) + _rows(errors, 0.0, {"category": "model_api", "message": ""}))
    p.on_end(stats)
    assert p.bar.bar_style == style


def test_updates_from_a_background_loop_thread_are_throttled_and_none_is_lost():
    """The uvloop path: callbacks fire on the loop's thread, 200 groups in ~1 s."""
    p = NotebookProgress(show=False, min_interval=0.25)
    stats = RunStats(total=200)
    p.on_start(stats)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    async def run():
        for _ in range(200):
            stats.add(_rows(1))
            p.on_progress(stats, [])
            await asyncio.sleep(0.005)  # the producer's pace: updates come faster than redraws

    t0 = time.monotonic()
    asyncio.run_coroutine_threadsafe(run(), loop).result(30)
    wait_until(
        lambda: p.bar.value == 200, "the flush timer draws the last pending change", timeout=10
    )
    # At most one redraw per interval (plus the first and the flush), however loaded the machine.
    assert 2 <= p.renders <= 2 + (time.monotonic() - t0) / 0.25 + 2
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


def test_flush_timer_draws_the_pending_change_when_the_clock_reaches_it():
    clock = ManualClock(start=100.0)
    p = NotebookProgress(show=False, min_interval=0.25, clock=clock)
    stats = RunStats(total=10)
    p.on_start(stats)
    assert (p.renders, p.bar.value, clock.waiting) == (1, 0, 0)
    stats.add(_rows(1))
    p.on_update(stats)  # within the interval of the first draw: deferred to a timer
    stats.add(_rows(2))
    p.on_update(stats)  # still deferred, to the same timer
    assert (p.renders, p.bar.value, clock.waiting) == (1, 0, 1)
    clock.advance(0.2)
    assert (p.renders, p.bar.value) == (1, 0)
    clock.advance(0.05)  # the interval is over: the timer draws the latest figures
    assert (p.renders, p.bar.value, p.count.value, clock.waiting) == (2, 3, "3/10", 0)
    clock.advance(0.25)
    stats.add(_rows(1))
    p.on_update(stats)  # an interval after the last draw: drawn at once, no timer
    assert (p.renders, p.bar.value, clock.waiting) == (3, 4, 0)
    stats.add(_rows(6))
    p.on_update(stats)
    assert clock.waiting == 1
    p.on_end(stats)  # the end draws the final frame and drops the pending flush
    assert (p.renders, p.bar.value, p.bar.bar_style, clock.waiting) == (4, 10, "success", 0)
    clock.advance(10)
    assert p.renders == 4
