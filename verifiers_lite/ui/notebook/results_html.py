"""Self-contained HTML for ``GenerateOutputs`` in a notebook: inline CSS, no JavaScript."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from verifiers_lite.core.content import part_kind
from verifiers_lite.core.progress import format_timing, length_warning
from verifiers_lite.core.reasoning import reasoning_of
from verifiers_lite.core.records import Row
from verifiers_lite.core.summary import cost_line, token_line
from verifiers_lite.core.tracebacks import ToolTracebacks
from verifiers_lite.results.sessions import run_duration
from verifiers_lite.stats.error_bars import format_estimate
from verifiers_lite.ui.notebook.cells import shown_in_this_cell
from verifiers_lite.ui.notebook.summary_html import warning_html

if TYPE_CHECKING:
    from verifiers_lite.results.run_data import SummarizedRun

MAX_ROWS = 8
MAX_TEXT = 120

# Style attributes, not a <style> block: JupyterLab's sanitiser strips <style> from untrusted
# (reopened) notebooks but keeps inline styles.
_BOX = 'style="font-family:sans-serif;font-size:13px;max-width:100%"'
_H = 'style="margin:6px 0 2px;font-size:13px"'
_TABLE = 'style="border-collapse:collapse;margin:2px 0 8px"'
_CELL = "border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top"
_TD = f'style="{_CELL}"'
_TH = f'style="{_CELL};background:#f3f3f3"'
_NUM = 'style="font-variant-numeric:tabular-nums"'
_ERR = 'style="color:#c62828"'
_MUTED = 'style="color:#777"'


def _e(value: Any) -> str:
    return html.escape(str(value))


def _short(text: Any, limit: int = MAX_TEXT) -> str:
    s = "" if text is None else str(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _num(value: Any, digits: int = 3) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "—" if isinstance(value, float) and math.isnan(value) else f"{value:.{digits}f}"
    return "—" if value is None else _e(value)


def _last_message(messages: Any, role: str) -> dict[str, Any]:
    for m in reversed(messages if isinstance(messages, list) else []):
        if isinstance(m, dict) and m.get("role") == role:
            return m
    return {}


def _content_text(message: dict[str, Any]) -> str:
    """A message's content as a line: text parts as text, an image as ``[image_url]`` (never
    its base64), a tool-call turn as its count."""
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(
            str(p.get("text", "")) if part_kind(p) == "text" else f"[{part_kind(p)}]"
            for p in content
        )
    if content:
        return str(content)
    return f"[tool calls: {len(message['tool_calls'])}]" if message.get("tool_calls") else ""


def _message_cell(messages: Any, role: str) -> str:
    """The last ``role`` message as a table cell: its reasoning collapsed, then its content."""
    if isinstance(messages, str):
        return _e(_short(messages))
    message = _last_message(messages, role)
    reasoning = reasoning_of(message)
    folded = (
        ""
        if reasoning is None
        else (
            f"<details><summary {_MUTED}>reasoning</summary><div "
            f"{_MUTED}>{_e(_short(reasoning, 4 * MAX_TEXT))}</div></details>"
        )
    )
    return folded + _e(_short(_content_text(message)))


def _kv_table(pairs: list[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th {_TH}>{_e(k)}</th><td {_TD}>{v}</td></tr>" for k, v in pairs)
    return f"<table {_TABLE}>{body}</table>"


def _run_facts(outputs: SummarizedRun) -> list[tuple[str, str]]:
    """The run's headline facts: env, model, counts, mean reward, status, duration, tokens, time."""
    s, meta = outputs.summary, outputs.metadata
    n_ex = meta.get("num_examples", len({r.get("example_id") for r in outputs.rows}))
    per = meta.get("rollouts_per_example", "?")
    seconds = run_duration(meta)
    sessions = len(meta.get("sessions") or [])
    duration = (
        ""
        if seconds is None
        else f"{seconds:.1f}s" + (f" (resumed: {sessions} sessions)" if meta.get("resumed") else "")
    )
    facts = [
        ("env", _e(meta.get("env_id", "—"))),
        ("model", _e(meta.get("model", "—"))),
        ("rollouts", f"{s['num_rollouts']} ({_e(n_ex)} examples × {_e(per)})"),
        (
            "mean reward",
            f"<b>{_e(format_estimate(s['reward_mean'], s['reward_stderr'], s['reward_ci']))}</b>"
            + f" <span {_MUTED}>(± stderr clustered by example)</span>"
            + (
                ""
                if s["num_scored"] == s["num_rollouts"]
                else f" over {s['num_scored']} scored (errored rollouts are not scored)"
            ),
        ),
    ]
    if meta.get("status"):
        stopped = (meta.get("budget") or {}).get("stopped")
        facts.append(("status", _e(meta["status"] + (f" (stopped: {stopped})" if stopped else ""))))
    if duration:
        facts.append(("duration", duration))
    if s["completion_tokens"]:
        facts.append(("tokens", token_line(s)))
    facts.append(("cost", _e(cost_line(s))))
    if s.get("timing_ms"):
        facts.append(
            ("time / rollout", _e(format_timing(s["timing_ms"])) + f" <span {_MUTED}>(mean)</span>")
        )
    return facts


def results_html(outputs: SummarizedRun, max_rows: int = MAX_ROWS) -> str:
    """Summary (env, model, counts, reward ± clustered stderr and 95% interval, metrics, errors)
    and the first rows."""
    s = outputs.summary
    facts = _run_facts(outputs)
    parts = [f'<div class="vf-results" {_BOX}><h4 {_H}>GenerateOutputs</h4>', _kv_table(facts)]
    if s["metrics_mean"]:
        parts.append(f"<h4 {_H}>Metrics (mean ± stderr, 95% CI)</h4>")
        parts.append(
            _kv_table(
                [
                    (
                        k,
                        f"<span {_NUM}>{_e(format_estimate(v, s['metrics_stderr'][k], s['metrics_ci'][k]))}</span>",
                    )
                    for k, v in s["metrics_mean"].items()
                ]
            )
        )
    if s["stop_reasons"]:
        parts.append(f"<h4 {_H}>Stop reasons</h4>")
        parts.append(
            _kv_table([(str(k), f"<span {_NUM}>{v}</span>") for k, v in s["stop_reasons"].items()])
        )
        warning = length_warning(s["stop_reasons"], s["num_rollouts"])
        if warning and not shown_in_this_cell(warning):  # once per cell: the run's display said it
            parts.append(warning_html(warning, "margin:2px 0 8px"))
    if s["errors"]:
        parts.append(f"<h4 {_H}>Errors by category</h4>")
        parts.append(
            _kv_table(
                [
                    (str(k), f"<span {_ERR}>{v}</span>")
                    for k, v in sorted(s["errors"].items(), key=lambda kv: -kv[1])
                ]
            )
        )
        parts.append(_tracebacks_html(outputs.rows))
    else:
        parts.append(f"<div {_MUTED}>no errors</div>")
    parts.append(_tool_tracebacks_html(outputs.rows))
    parts.append(_rows_table(outputs.rows, max_rows))
    return "".join(parts) + "</div>"


def _rows_table(rows: Sequence[Row], max_rows: int) -> str:
    if not rows:
        return f"<div {_MUTED}>no rows</div>"
    head = [
        "example",
        "#",
        "reward",
        "adv.",
        "turns",
        "stop",
        "question",
        "completion",
        "answer",
        "error",
    ]
    out = [
        f"<h4 {_H}>First {min(max_rows, len(rows))} of {len(rows)} rows</h4><table {_TABLE}><tr>"
    ]
    out.append("".join(f"<th {_TH}>{h}</th>" for h in head) + "</tr>")
    for r in rows[:max_rows]:
        err = r.get("error")
        err_text = (
            f"{err.get('category', '')}: {err.get('message', '')}"
            if isinstance(err, dict) and err
            else (err or "")
        )
        cells = [
            _e(r.get("example_id")),
            _e(r.get("rollout_index", "")),
            f"<span {_NUM}>{_num(r.get('reward'))}</span>" + _explanations_html(r),
            f"<span {_NUM}>{_num(r.get('advantage'))}</span>",
            _e(r.get("turns", "")),
            _e(r.get("stop_reason") or ""),
            _message_cell(r.get("prompt"), "user"),
            _message_cell(r.get("completion"), "assistant"),
            _e(_short(r.get("answer"), 40)),
            f"<span {_ERR}>{_e(_short(err_text, 80))}</span>",
        ]
        out.append("<tr>" + "".join(f"<td {_TD}>{c}</td>" for c in cells) + "</tr>")
    return "".join(out) + "</table>"


TRACEBACK_SCAN = 10_000
"""Rows read for the error view's tracebacks (a run of a million rows is not read through)."""


def _tracebacks_html(rows: Sequence[Row]) -> str:
    """Each distinct traceback among the first rows (the author's frames), with how many
    rollouts failed there; the first open."""
    found: dict[str, list[Any]] = {}  # text -> [category, rollouts]
    for r in rows[:TRACEBACK_SCAN]:
        err = r.get("error")
        text = err.get("traceback") if isinstance(err, dict) else None
        if err and text:
            found.setdefault(text, [err.get("category", "error"), 0])[1] += 1
    return "".join(
        _traceback_details(
            f"traceback · {category} · {n} rollout{'s' if n > 1 else ''}", text, i == 0
        )
        for i, (text, (category, n)) in enumerate(found.items())
    )


def _tool_tracebacks_html(rows: Sequence[Row]) -> str:
    """The tool calls whose tool raised among the first rows (their rollouts went on, so the
    errors above do not count them): how many, and each distinct traceback, the first open."""
    tools = ToolTracebacks().add_all(rows[:TRACEBACK_SCAN])
    if not tools.calls:
        return ""
    scanned = f" (in the first {TRACEBACK_SCAN:,} rows)" if len(rows) > TRACEBACK_SCAN else ""
    out = [f"<h4 {_H}>Tool errors</h4><div {_ERR}>{_e(tools.line() + scanned)}</div>"]
    out.extend(
        _traceback_details(f"traceback · tool · {n} call{'s' if n > 1 else ''}", text, i == 0)
        for i, (text, n) in enumerate(tools.distinct.values())
    )
    return "".join(out)


def _traceback_details(label: str, text: str, opened: bool) -> str:
    """One traceback under its label, folded unless ``opened``."""
    return (
        f'<details{" open" if opened else ""} class="vf-traceback"><summary {_ERR}>{_e(label)}'
        f'</summary><pre style="margin:2px 0 6px;font-size:12px;white-space:pre-wrap">'
        f"{_e(text)}</pre></details>"
    )


def _explanations_html(row: Row) -> str:
    """Why each reward function scored so, where it said (``vf.Score``), under the reward."""
    explanations = row.get("explanations") or {}
    return "".join(
        f'<div class="vf-explanation" {_MUTED}>{_e(name)}: {_e(_short(text, 160))}</div>'
        for name, text in explanations.items()
    )
