"""Live ipywidgets progress for Jupyter: bar, rollouts finished/total (counted as each rollout
ends, before its group is scored), rollouts in flight, mean reward ± stderr, errors, stop
reasons, rollouts/s, elapsed/ETA (ticking about once a second) and a reward histogram that
fills in as groups are scored.

Updates may arrive from any thread (a `*_sync` call in a cell runs the scheduler on a background
loop thread); they are throttled to a few per second and a pending change is flushed by a timer so
the display never lags more than one interval behind. At the end the widget output is replaced
by a static HTML frame, so the saved notebook reads well anywhere (GitHub, nbconvert, no JS).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from verifiers_lite._util.clock import Clock, SystemClock, Timer
from verifiers_lite._util.extras import install_hint
from verifiers_lite.core.progress import RunStats, format_stop_reasons
from verifiers_lite.core.records import Row
from verifiers_lite.ui.notebook.detect import in_jupyter_kernel, progress_override
from verifiers_lite.ui.notebook.summary_html import (
    final_frame_html,
    histogram_html,
    stats_line,
    stop_reasons_html,
)

MIN_INTERVAL = 0.25  # seconds between redraws: at most ~4 updates per second
_hint_shown = False


class SilentProgress:
    """``VF_PROGRESS=none``: no display at all."""

    def on_start(self, stats: RunStats) -> None: ...
    def on_progress(self, stats: RunStats, rows: list[Row]) -> None: ...
    def on_update(self, stats: RunStats) -> None: ...
    def on_log(self, message: str) -> None: ...
    def on_end(self, stats: RunStats) -> None: ...


def notebook_progress(desc: str = "rollouts") -> Any:
    """A live widget display when running in a Jupyter kernel, else None (the caller uses tqdm).

    Without ipywidgets it returns None after a one-line hint, so progress falls back to text.
    """
    mode = progress_override()
    if mode == "none":
        return SilentProgress()
    if mode == "text" or (mode is None and not in_jupyter_kernel()):
        return None
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        _hint_once()
        return None
    return NotebookProgress(desc)


def _hint_once() -> None:
    global _hint_shown
    if not _hint_shown:
        _hint_shown = True
        print(
            f"verifiers_lite: text progress (for the live widget: {install_hint('notebook')})",
            file=sys.stderr,
        )


class NotebookProgress:
    """The widget display; one instance per run. Implements the ProgressCallback protocol.

    ``clock`` (default the system's) throttles redraws and runs the flush timer.
    """

    def __init__(
        self,
        desc: str = "rollouts",
        min_interval: float = MIN_INTERVAL,
        show: bool = True,
        clock: Clock | None = None,
    ) -> None:
        self.desc = desc
        self.min_interval = min_interval
        self.show = show  # False in unit tests: build and update widgets without displaying
        self.renders = 0
        self.final_style: str | None = None
        self._clock: Clock = clock or SystemClock()
        self._lock = threading.Lock()
        self._last = float("-inf")  # the first update draws at once
        self._timer: Timer | None = None
        self._stats: RunStats | None = None
        self._handle: Any = None
        self._logs: list[str] = []

    # -- callbacks ------------------------------------------------------------------------
    def on_start(self, stats: RunStats) -> None:
        import ipywidgets as w

        self._stats = stats
        self.bar = w.IntProgress(
            min=0,
            max=max(stats.total, 1),
            value=stats.done,
            bar_style="info",
            layout=w.Layout(width="45%"),
        )
        self.count = w.HTML()
        self.figures = w.HTML()
        self.stops = w.HTML()
        self.hist = w.HTML()
        self.log = w.HTML()
        header = w.HBox(
            [w.HTML(f"<b>{_esc(self.desc)}</b>"), self.bar, self.count],
            layout=w.Layout(align_items="center"),
        )
        self.box = w.VBox([header, self.figures, self.stops, self.hist, self.log])
        self._render(stats)
        if self.show:
            from IPython.display import display

            self._handle = display(self.box, display_id=True)

    def on_progress(self, stats: RunStats, rows: list[Row]) -> None:
        self.on_update(stats)

    def on_update(self, stats: RunStats) -> None:
        with self._lock:
            self._stats = stats
            wait = self.min_interval - (self._clock.now() - self._last)
            if wait <= 0:
                if self._timer is not None:  # this draw shows the pending change too
                    self._timer.cancel()
                    self._timer = None
                self._render(stats)
            elif self._timer is None:  # flush later so the last change is never lost
                self._timer = self._clock.call_later(wait, self._flush)

    def on_log(self, message: str) -> None:
        with self._lock:
            self._logs = (self._logs + [message])[-3:]
            if hasattr(self, "log"):
                self.log.value = "".join(
                    f'<div style="color:#b26a00;font-size:11px">{_esc(m)}</div>' for m in self._logs
                )

    def on_end(self, stats: RunStats) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not hasattr(self, "bar"):
                return
            if stats.done < stats.total or (stats.done and stats.error_count == stats.done):
                style = "danger"  # interrupted, or nothing succeeded
            elif stats.error_count:
                style = "warning"
            else:
                style = "success"
            self.final_style = style
            self._render(stats, final=True)
            self.bar.bar_style = style
            if self._handle is not None:
                self._handle.update(
                    _FinalFrame(final_frame_html(self.desc, stats, style), self.text())
                )

    # -- drawing --------------------------------------------------------------------------
    def _flush(self) -> None:
        with self._lock:
            self._timer = None
            if self._stats is not None and self.final_style is None:
                self._render(self._stats)

    def _render(self, stats: RunStats, final: bool = False) -> None:
        self._last = self._clock.now()
        self.renders += 1
        self.bar.max = max(stats.total, 1)
        self.bar.value = stats.finished
        self.count.value = f"{stats.finished}/{stats.total}"
        self.figures.value = f'<span style="font-size:12px">{_esc(stats_line(stats, final))}</span>'
        self.stops.value = stop_reasons_html(stats)
        self.hist.value = histogram_html(stats.recent_rewards)

    def text(self) -> str:
        """The current figures as one plain line (also the saved notebook's text/plain)."""
        s = self._stats
        if s is None:
            return self.desc
        stops = f" · stop reasons: {format_stop_reasons(s.stop_reasons)}" if s.stop_reasons else ""
        return f"{self.desc}: {s.done}/{s.total} · {stats_line(s, final=True)}{stops}"


class _FinalFrame:
    """What the display handle is updated to at the end: static HTML plus a text fallback."""

    def __init__(self, html: str, text: str) -> None:
        self.html, self.text = html, text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/html": self.html, "text/plain": self.text}


def _esc(text: str) -> str:
    import html

    return html.escape(text)
