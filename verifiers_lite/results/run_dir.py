"""The run directory's files and the one rule for reading ``results.jsonl`` back whole.

A run directory holds ``results.jsonl`` (rows, appended one write per group), ``metadata.json``
(replaced whole, never appended) and ``results.index`` (derived, see
:mod:`verifiers_lite.results.row_index`). Every line of one write carries the write's id and
size, so a reader keeps a write only once all of its lines are on disk: a torn last line (no
newline yet: a crash mid-write, or a writer still at it), a line that is not a JSON object and
the lines of a write cut short are never rows. The store, the row index and the viewer's index
all read through :func:`complete_lines` and :class:`WholeWrites`; nothing else knows the tags.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Generic, TypeVar, cast

from verifiers_lite.core.records import Row
from verifiers_lite.core.trajectory import tool_call_records

RESULTS_FILE = "results.jsonl"
METADATA_FILE = "metadata.json"
#: each distinct traceback of the run once (``{"id", "traceback"}`` per line): its errors' and
#: its tools'; a row keeps only the key (``traceback_id`` of its error, of a step's tool call)
#: and gets the text back when read
TRACEBACKS_FILE = "tracebacks.jsonl"
_WRITE_ID, _WRITE_SIZE = "_write_id", "_write_size"  # the tags on each line of a write

Item = TypeVar("Item")


def encode_write(rows: Sequence[Row], write_id: str, dumps: Callable[[Any], str]) -> list[bytes]:
    """One write's lines, each tagged with the write's id and size (a reader's proof of a whole
    write); traceback texts are left to :data:`TRACEBACKS_FILE` (their keys stay)."""
    size = len(rows)
    return [
        (dumps({**_without_traceback(r), _WRITE_ID: write_id, _WRITE_SIZE: size}) + "\n").encode(
            "utf-8"
        )
        for r in rows
    ]


def _traced(row: Row) -> Iterator[dict[str, Any]]:
    """The records of ``row`` that may keep a traceback under a key: its error, and each tool
    call of its trajectory's steps (a tool that raised; the rollout went on)."""
    error = row.get("error")
    if isinstance(error, dict):
        yield cast(dict[str, Any], error)
    yield from tool_call_records(row)


def _stored_apart(record: Any) -> bool:
    """Whether ``record``'s traceback text goes to :data:`TRACEBACKS_FILE` (it has a key)."""
    return isinstance(record, dict) and "traceback" in record and "traceback_id" in record


def _text_dropped(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "traceback"}


def _without_traceback(row: Row) -> Row:
    """``row`` as written: each keyed traceback's text left out (copies; ``row`` is the
    caller's, still in use)."""
    out: dict[str, Any] = dict(row)
    if _stored_apart(out.get("error")):
        out["error"] = _text_dropped(out["error"])
    steps = out.get("trajectory")
    if isinstance(steps, list) and any(
        isinstance(s, dict)
        and isinstance(s.get("tool_calls"), list)
        and any(_stored_apart(c) for c in s["tool_calls"])
        for s in steps
    ):
        out["trajectory"] = [_step_without_traceback(s) for s in steps]
    return cast(Row, out)


def _step_without_traceback(step: Any) -> Any:
    calls = step.get("tool_calls") if isinstance(step, dict) else None
    if not isinstance(calls, list) or not any(_stored_apart(c) for c in calls):
        return step
    return {**step, "tool_calls": [_text_dropped(c) if _stored_apart(c) else c for c in calls]}


def new_tracebacks(rows: Sequence[Row], known: set[str]) -> list[bytes]:
    """The :data:`TRACEBACKS_FILE` lines of the tracebacks in ``rows`` (errors' and tool
    calls') not in ``known`` (which gets their keys)."""
    lines: list[bytes] = []
    for r in rows:
        for record in _traced(r):
            key = record.get("traceback_id")
            if key and key not in known and "traceback" in record:
                known.add(key)
                entry = {"id": key, "traceback": record["traceback"]}
                lines.append((json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8"))
    return lines


def read_tracebacks(directory: Path) -> dict[str, str]:
    """A run directory's tracebacks by key (empty for a run that saved none, or an older one)."""
    table: dict[str, str] = {}
    path = directory / TRACEBACKS_FILE
    if not path.exists():
        return table
    with open(path, "rb") as f:
        for _, line in complete_lines(f):
            entry = parse_line(line)
            if (
                entry
                and isinstance(entry.get("id"), str)
                and isinstance(entry.get("traceback"), str)
            ):
                table[entry["id"]] = entry["traceback"]
    return table


def restore_traceback(row: Row, table: dict[str, str]) -> Row:
    """``row`` with the traceback texts of its error and tool calls back from ``table`` (the
    run's), where they have a key."""
    for record in _traced(row):
        key = record.get("traceback_id")
        if key and "traceback" not in record and key in table:
            record["traceback"] = table[key]
    return row


def write_size(first_line: dict[str, Any]) -> int:
    """How many lines the write this (first) line begins has; -1 when its tag is not a count."""
    size = first_line.get(_WRITE_SIZE, 1)
    return size if isinstance(size, int) else -1


def read_row(line: bytes, tracebacks: dict[str, str] | None = None) -> Row:
    """The row on a line an index points at, its write's tags removed (ValueError: no row
    there), its error's traceback text restored from ``tracebacks`` (the run's table)."""
    row = parse_line(line)
    if row is None:
        raise ValueError(f"not a row: {line[:80]!r}")
    row.pop(_WRITE_ID, None)
    row.pop(_WRITE_SIZE, None)
    return restore_traceback(cast(Row, row), tracebacks) if tracebacks else cast(Row, row)


def complete_lines(f: BinaryIO, offset: int = 0) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` of every line from ``offset`` that ends in a newline; stops at a torn
    last line (it may still be being written, so it is never read as a row)."""
    f.seek(offset)
    for line in f:
        if not line.endswith(b"\n"):
            return
        yield offset, line
        offset += len(line)


def parse_line(line: bytes) -> dict[str, Any] | None:
    """A complete line's JSON object, or None when it is not one (such a line is skipped).
    Bytes that are not UTF-8 are read as replacement characters, not as a broken line."""
    try:
        row = json.loads(line.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    return row if isinstance(row, dict) else None


class WholeWrites(Generic[Item]):
    """Assembles complete lines, fed in file order, into whole writes. :meth:`take` gets each
    line's parsed object (None when it was not one) and what the caller keeps of the line, and
    returns the kept items of the write that line completed (nothing while a write is partial).
    ``unreadable`` counts lines that were not objects; ``partial`` the lines of writes still
    waiting for the rest of their lines (once a file is read through: writes cut short)."""

    def __init__(self) -> None:
        self._pending: dict[str, list[Item]] = {}
        self.unreadable = 0

    def take(self, parsed: dict[str, Any] | None, item: Item) -> Sequence[Item]:
        """Feed one line (its tags are removed from ``parsed``); the items now whole."""
        if parsed is None:
            self.unreadable += 1
            return ()
        wid, size = parsed.pop(_WRITE_ID, None), parsed.pop(_WRITE_SIZE, 1)
        if not isinstance(wid, str) or not isinstance(size, int) or size <= 1:
            return (item,)  # a write of one line (or a row written before writes were tagged)
        group = self._pending.setdefault(wid, [])
        group.append(item)
        if len(group) < size:
            return ()
        del self._pending[wid]
        return group

    @property
    def partial(self) -> int:
        return sum(len(group) for group in self._pending.values())
