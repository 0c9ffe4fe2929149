"""Small HTML pieces shared by the live widget and its static final frame (inline CSS, no JS)."""

from __future__ import annotations

import html
import math

from verifiers_lite.progress import RunStats, format_stop_reasons

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
    running = "" if final else f"{stats.in_flight} running · "
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
        line += f'<div class="vf-warning" style="font-size:12px;color:#b26a00">⚠ {html.escape(warning)}</div>'
    return line


def histogram_html(rewards: list[float], bins: int = 12, height: int = 36) -> str:
    """A tiny reward histogram as CSS bars: cheap enough to redraw several times a second."""
    if not rewards:
        return ""
    lo, hi = min(min(rewards), 0.0), max(max(rewards), 1.0)
    width = (hi - lo) / bins or 1.0
    counts = [0] * bins
    for r in rewards:
        counts[min(bins - 1, int((r - lo) / width))] += 1
    top = max(counts) or 1
    bars = "".join(
        f'<div title="{lo + i * width:.2f}–{lo + (i + 1) * width:.2f}: {c}" style="width:10px;'
        f'height:{max(1, round(height * c / top)) if c else 0}px;background:#5c6bc0;margin-right:1px"></div>'
        for i, c in enumerate(counts)
    )
    return (
        f'<div style="display:flex;align-items:flex-end;gap:8px;font-size:11px;color:#666">'
        f'<span>{lo:g}</span><div style="display:flex;align-items:flex-end;height:{height}px;'
        f'border-bottom:1px solid #999">{bars}</div><span>{hi:g}</span>'
        f'<span>reward histogram (n={len(rewards)})</span></div>'
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
