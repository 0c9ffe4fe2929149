"""Small HTML pieces of the live widget, its static final frame and the results table (inline CSS, no JS)."""

from __future__ import annotations

import html
import math

from verifiers_lite.core.progress import RunStats, format_stop_reasons
from verifiers_lite.ui.notebook.cells import note_shown

BAR_COLORS = {"success": "#4caf50", "warning": "#ff9800", "danger": "#e53935", "info": "#2196f3"}


def fmt_seconds(seconds: float | None) -> str:
    """``42s``, ``3m05s``, ``1h02m``; an em dash when unknown."""
    if seconds is None or not math.isfinite(seconds):
        return "—"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def stats_line(stats: RunStats, final: bool = False) -> str:
    """One line of figures: mean reward ± stderr (clustered by example) and its 95% interval,
    errors, in flight, rate, elapsed and ETA."""
    reward = f"mean reward {stats.reward_text()}"
    errors = ", ".join(f"{k} {v}" for k, v in sorted(stats.errors.items()))
    err = f"errors {stats.error_count}" + (f" ({errors})" if errors else "")
    limit = stats.in_flight_limit
    running = (
        ""
        if final
        else f"{stats.in_flight} running" + (f" (limit {limit}, auto)" if limit else "") + " · "
    )
    timing = f"elapsed {fmt_seconds(stats.elapsed)}"
    if not final:
        timing += f" · ETA {fmt_seconds(stats.eta)}"
    resumed = f" · resumed {stats.resumed}" if stats.resumed else ""
    if stats.cache_hits is not None:
        resumed += f" · cache {stats.cache_hits} hits / {stats.cache_misses} misses"
    return f"{reward} · {err} · {running}{stats.rate:.1f} rollouts/s · {timing}{resumed}"


def stop_reasons_html(stats: RunStats) -> str:
    """Counts by stop reason, and a warning naming ``max_tokens`` when many hit the limit."""
    if not stats.stop_reasons:
        return ""
    line = f'<div style="font-size:12px">stop reasons: {html.escape(format_stop_reasons(stats.stop_reasons))}</div>'
    warning = stats.length_warning()
    if warning:
        note_shown(warning)
        line += warning_html(warning, "font-size:12px")
    return line


def warning_html(warning: str, style: str = "") -> str:
    """A warning line (the live widget's and the results table's): amber, with a ⚠."""
    return f'<div class="vf-warning" style="color:#b26a00;{style}">⚠ {html.escape(warning)}</div>'


HIST_WIDTH, HIST_HEIGHT = 320, 90  # px: the plot area of the widget's reward histogram
_AXIS = "border-left:1px solid #888;border-bottom:1px solid #888"


def histogram_html(rewards: list[float], bins: int = 10, ticks: int = 5) -> str:
    """The widget's reward histogram as CSS bars with axes: counts on the bars and the y axis,
    reward ticks on the x axis. Plain inline-styled HTML, cheap to redraw several times a second."""
    if not rewards:
        return ""
    lo, hi = min(min(rewards), 0.0), max(max(rewards), 1.0)
    width = (hi - lo) / bins or 1.0
    counts = [0] * bins
    for r in rewards:
        counts[min(bins - 1, int((r - lo) / width))] += 1
    top = max(counts) or 1
    label_h = 14  # room above the tallest bar for its count
    bars = "".join(
        f'<div class="vf-bin" title="{lo + i * width:.2f}–{lo + (i + 1) * width:.2f}: {c}" style="flex:1;'
        f'display:flex;flex-direction:column;justify-content:flex-end;align-items:center;height:100%">'
        f'<span style="font-size:10px;line-height:{label_h}px;color:#333">{c or ""}</span>'
        f'<div style="width:100%;height:{round(HIST_HEIGHT * c / top) if c else 0}px;background:#5c6bc0"></div></div>'
        for i, c in enumerate(counts)
    )
    # Zero-width items spread across the axis: each label is centred on its tick position.
    xticks = "".join(
        f'<span class="vf-xtick" style="flex:0 0 0;width:0;display:flex;justify-content:center;'
        f'white-space:nowrap">{lo + k * (hi - lo) / (ticks - 1):g}</span>'
        for k in range(ticks)
    )
    y_axis = (
        f'<div class="vf-yaxis" style="width:34px;height:{HIST_HEIGHT}px;margin-top:{label_h}px;display:flex;'
        "flex-direction:column;justify-content:space-between;align-items:flex-end;padding-right:4px;"
        f'box-sizing:border-box;line-height:1"><span>{top}</span><span>0</span></div>'
    )
    return (
        '<div class="vf-hist" style="display:inline-block;font-size:11px;color:#555;margin-top:6px">'
        f'<div style="margin-left:34px;color:#333">reward histogram · {len(rewards)} rollouts'
        ' <span style="color:#777">(rollouts per bin)</span></div>'
        f'<div style="display:flex">{y_axis}<div class="vf-bars" style="display:flex;align-items:flex-end;gap:2px;'
        f'width:{HIST_WIDTH}px;height:{HIST_HEIGHT + label_h}px;{_AXIS}">{bars}</div></div>'
        f'<div style="display:flex;justify-content:space-between;width:{HIST_WIDTH}px;margin-left:35px;'
        f'padding-top:2px">{xticks}</div>'
        f'<div style="width:{HIST_WIDTH}px;margin-left:35px;text-align:center;color:#333">reward</div></div>'
    )


def final_frame_html(desc: str, stats: RunStats, style: str) -> str:
    """The static frame left in the saved notebook: renders without a widget manager."""
    pct = 100.0 * stats.done / stats.total if stats.total else 100.0
    color = BAR_COLORS.get(style, BAR_COLORS["info"])
    return (
        '<div class="vf-progress" style="font-family:sans-serif;font-size:13px;margin:4px 0">'
        f'<div style="display:flex;align-items:center;gap:8px"><b>{html.escape(desc)}</b>'
        '<div style="flex:0 0 40%;height:14px;background:#eee;border-radius:3px;overflow:hidden">'
        f'<div style="width:{pct:.1f}%;height:100%;background:{color}"></div></div>'
        f"<span>{stats.done}/{stats.total}</span></div>"
        f'<div style="margin:3px 0">{html.escape(stats_line(stats, final=True))}</div>'
        f"{stop_reasons_html(stats)}{histogram_html(stats.recent_rewards)}</div>"
    )
