"""A failure's stack as the environment's author reads it: their own frames (file, line,
function, source line), the library's, the event loop's and its worker threads' folded into one
line per run of them. ``VF_DEBUG=1`` keeps every frame.

A row keeps the text in ``error["traceback"]`` and its key (:func:`traceback_key`) in
``error["traceback_id"]``; a saved run stores each distinct text once (``tracebacks.jsonl``
beside ``results.jsonl``) and its rows only the key. A tool call whose function raised keeps
its text and key the same way on its record (``tool_calls`` of the trajectory step that asked
for it; a token-level rollout's ``tool_errors``); the model is told the error's message, the
rollout goes on, and :class:`ToolTracebacks` counts such calls for the reports.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import hashlib
import os
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifiers_lite.core.trajectory import tool_call_records

_FOLDED_DIRS = (
    str(Path(__file__).resolve().parent.parent) + os.sep,  # the library's package
    str(Path(asyncio.__file__).resolve().parent) + os.sep,
    # the worker threads sync tools and reward functions run in
    str(Path(concurrent.futures.__file__).resolve().parent) + os.sep,
)
_MAX_CHARS = 8000


def debug_tracebacks() -> bool:
    """``VF_DEBUG=1`` (or true/yes/on): keep the library's frames too."""
    return os.environ.get("VF_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")


@functools.lru_cache(maxsize=4096)
def _folded(filename: str) -> bool:
    """Whether a frame of ``filename`` is the library's or the event loop's (asked per frame of
    every failure: cached)."""
    try:
        path = str(Path(filename).resolve())
    except (OSError, ValueError):
        return False
    return path.startswith(_FOLDED_DIRS)


def _frames(exc: BaseException, keep_all: bool) -> tuple[list[str], int]:
    """The stack of ``exc`` as lines, the folded runs of frames as one line each, and the
    number of the author's own frames."""
    lines: list[str] = []
    folded = own = 0
    for frame in traceback.extract_tb(exc.__traceback__):
        if not keep_all and _folded(frame.filename):
            folded += 1
            continue
        if folded:
            lines.append(f"  [{folded} frame{'s' if folded > 1 else ''} of the library folded]")
            folded = 0
        own += not _folded(frame.filename)
        lines.append(f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}')
        if frame.line:
            lines.append(f"    {frame.line.strip()}")
    if folded:
        lines.append(f"  [{folded} frame{'s' if folded > 1 else ''} of the library folded]")
    return lines, own


def user_traceback(exc: BaseException) -> str | None:
    """The text of ``exc``'s stack from the author's frames (its causes first, as Python
    chains them), or None when no frame is the author's (a model request that failed, a
    timeout): the message alone then says it all. ``VF_DEBUG=1`` keeps every frame."""
    keep_all = debug_tracebacks()
    chain: list[tuple[BaseException, str]] = []
    current: BaseException | None = exc
    link = ""
    while current is not None and all(current is not e for e, _ in chain):
        chain.append((current, link))
        if current.__cause__ is not None:
            current, link = current.__cause__, _CAUSE
        else:
            context = None if current.__suppress_context__ else current.__context__
            current, link = context, _CONTEXT
    parts: list[str] = []
    own_total = 0
    for error, link in reversed(chain):
        lines, own = _frames(error, keep_all)
        own_total += own
        parts.append(
            "\n".join(["Traceback (most recent call last):", *lines, _exception_line(error)])
        )
        if link:
            parts.append(link)
    if not own_total and not keep_all:
        return None
    text = "\n\n".join(parts)
    return text if len(text) <= _MAX_CHARS else "…" + text[-_MAX_CHARS:]


_CAUSE = "The above exception was the direct cause of the following exception:"
_CONTEXT = "During handling of the above exception, another exception occurred:"


def _exception_line(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).rstrip()


def traceback_key(text: str) -> str:
    """The key a traceback's text is stored under once per run (16 hex digits of its sha256)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class ToolTracebacks:
    """The tool calls of some rows whose tool raised and kept a traceback (a tool that raises
    does not fail its rollout, so the rows' errors do not count them): how many calls, in how
    many rollouts, and each distinct traceback with its calls, first seen first."""

    calls: int = 0  #: tool calls that raised, with a traceback
    rollouts: int = 0  #: rollouts with at least one of them
    #: each distinct traceback's text and how many calls raised there, by key, first seen first
    distinct: dict[str, tuple[str, int]] = field(default_factory=dict)

    def add_all(self, rows: Iterable[Mapping[str, Any]]) -> ToolTracebacks:
        """Count these rows' failed tool calls; returns itself."""
        for row in rows:
            failed = [c for c in tool_call_records(row) if isinstance(c.get("traceback"), str)]
            self.rollouts += bool(failed)
            for call in failed:
                self.calls += 1
                text = call["traceback"]
                key = call.get("traceback_id") or traceback_key(text)
                seen = self.distinct.get(key, (text, 0))
                self.distinct[key] = (seen[0], seen[1] + 1)
        return self

    def line(self) -> str:
        """``tool errors: N calls in M rollouts, K distinct tracebacks``."""
        k = len(self.distinct)
        return (
            f"tool errors: {self.calls} call{'s' if self.calls != 1 else ''} in {self.rollouts} "
            f"rollout{'s' if self.rollouts != 1 else ''}, {k} distinct traceback{'s' if k != 1 else ''}"
        )
