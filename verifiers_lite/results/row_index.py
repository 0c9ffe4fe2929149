"""The row index beside ``results.jsonl``: where each saved row's line lies, 40 bytes a row.

``results.index`` holds fixed records (example_id, rollout_index, byte offset, byte length, and
where the row's write began), one per row, appended after each group's lines are on disk. It is
derived data and checked against the rows when read: the last write's records are dropped and
that write is read again from the rows (its records may be torn), records with gaps between
them, past the end of the rows or off line boundaries void the index (the rows are then
scanned), and rows written after
the last record (a crash between the two writes) are scanned from the rows, with the torn-write rule
of :mod:`verifiers_lite.results.run_dir`.
A rewrite of the rows removes the index before replacing them, so an index never describes
another file, and a writer that appends first brings the index up to date with the rows. Rows whose
ids are not integers are not indexed: they are read into memory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

import numpy as np

from verifiers_lite.core.records import Row
from verifiers_lite.results import run_dir
from verifiers_lite.results.run_dir import RESULTS_FILE

INDEX_FILE = "results.index"
RECORD = np.dtype(
    [
        ("example_id", "<i8"),
        ("rollout_index", "<i8"),
        ("offset", "<i8"),
        ("length", "<i8"),
        ("write_start", "<i8"),
    ]
)
ROW = np.dtype(
    [("example_id", "<i8"), ("offset", "<i8"), ("rollout_index", "<i4"), ("length", "<i4")]
)
"""What a reader keeps of a record: 24 bytes a row."""
_ROW_FIELDS = ("example_id", "offset", "rollout_index", "length")


def _records(rows: list[Row], offset: int, lines: list[bytes]) -> bytes | None:
    """Packed records of one write, or None when an id is not an integer."""
    out = np.empty(len(rows), dtype=RECORD)
    start = offset
    for i, (row, line) in enumerate(zip(rows, lines, strict=True)):
        eid, idx = row.get("example_id"), row.get("rollout_index", 0)
        if eid.__class__ is not int or idx.__class__ is not int:
            return None
        out[i] = (eid, idx, offset, len(line), start)
        offset += len(line)
    return out.tobytes()


class IndexWriter:
    """Appends records to the run's index (``fresh``: builds a new one, put in place by
    :meth:`commit`). Gives up, removing its file, on a row it cannot index."""

    def __init__(self, run_dir: Path, fresh: bool = False) -> None:
        self.path = run_dir / INDEX_FILE
        self.target = self.path.with_name(f".{INDEX_FILE}.tmp")
        self.fresh = fresh
        self._fd: int | None = os.open(self.target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        if not fresh:  # appending: first make the index describe every row already on disk
            rows = load(run_dir / RESULTS_FILE)
            if rows is None:
                self.close()
                self.target.unlink(missing_ok=True)
                return
            records = np.empty(len(rows), dtype=RECORD)
            for name in _ROW_FIELDS:
                records[name] = rows[name]
            records["write_start"] = rows["offset"]  # whole writes, each row taken as its own
            os.write(self._fd, records.tobytes())
            self.close()
            os.replace(self.target, self.path)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    def append(self, rows: list[Row], offset: int, lines: list[bytes]) -> None:
        if self._fd is None:
            return
        data = _records(rows, offset, lines)
        if data is None:
            self.close()
            self.target.unlink(missing_ok=True)
            return
        os.write(self._fd, data)  # no fsync: a lost or torn record is rebuilt from the rows

    def commit(self) -> None:
        if self._fd is not None:
            self.close()
            if self.fresh:
                os.replace(self.target, self.path)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def remove(run_dir: Path) -> None:
    (run_dir / INDEX_FILE).unlink(missing_ok=True)


def load(results_file: Path) -> np.ndarray | None:
    """Where every whole row lies (:data:`ROW` records, file order): from the index, checked,
    plus the rows written after it; None when some row has ids that are not integers (or there
    is no file)."""
    try:
        size = results_file.stat().st_size
    except FileNotFoundError:
        return None
    rows, resume_at = _checked_index(results_file, size)
    rows = rows[: int(np.searchsorted(rows["offset"], resume_at))]  # a view: no copy
    tail = _scan(results_file, resume_at)
    if tail is None:
        return None
    return np.concatenate([rows, tail]) if len(tail) else rows


def _checked_index(results_file: Path, size: int, chunk: int = 1 << 16) -> tuple[np.ndarray, int]:
    """The index's rows, read in chunks (24 of its 40 bytes a row kept), and where the rows
    file must be read from (the last write again when its records may be torn); nothing and 0
    when the index is absent or does not describe these rows."""
    try:
        with open(results_file.with_name(INDEX_FILE), "rb") as f:
            found = _read_index(f, chunk)
    except FileNotFoundError:
        found = None
    if found is None:
        return np.empty(0, dtype=ROW), 0  # no index, or gaps: not this file's index
    rows, end, last = found
    if last is None:
        return rows, 0
    if end > size or not _on_line_boundaries(results_file, rows[0], rows[-1]):
        return np.empty(0, dtype=ROW), 0
    write_start = int(last["write_start"][-1])
    indexed = int(np.count_nonzero(last["write_start"] == write_start))
    return rows, end if indexed == _write_size(results_file, write_start) else write_start


def _read_index(f: BinaryIO, chunk: int) -> tuple[np.ndarray, int, np.ndarray | None] | None:
    """The rows of an open index, where the last one ends, and the last chunk's records; None
    when a record does not start where the previous one ended."""
    whole = os.fstat(f.fileno()).st_size // RECORD.itemsize  # a torn last record is left out
    rows = np.empty(whole, dtype=ROW)
    end, last = 0, None
    for lo in range(0, whole, chunk):
        part = np.fromfile(f, dtype=RECORD, count=min(chunk, whole - lo))
        ends = part["offset"] + part["length"]
        if int(part["offset"][0]) != end or not np.array_equal(part["offset"][1:], ends[:-1]):
            return None
        for name in _ROW_FIELDS:
            rows[name][lo : lo + len(part)] = part[name]
        end, last = int(ends[-1]), part
    return rows, end, last


def _write_size(results_file: Path, offset: int) -> int:
    """The number of lines of the write starting at ``offset`` (its first line's tag)."""
    with open(results_file, "rb") as f:
        f.seek(offset)
        row = run_dir.parse_line(f.readline())
    return -1 if row is None else run_dir.write_size(row)


def _on_line_boundaries(results_file: Path, *records: np.void) -> bool:
    """These records start after a newline and end with one."""
    with open(results_file, "rb") as f:
        for rec in records:
            offset, length = int(rec["offset"]), int(rec["length"])
            f.seek(max(0, offset - 1))
            around = f.read(length + (1 if offset else 0))
            if (offset and around[:1] != b"\n") or not around.endswith(b"\n"):
                return False
    return True


def _scan(results_file: Path, start: int) -> np.ndarray | None:
    """Records of the whole writes from byte ``start`` on (the run directory's torn-write rule)."""
    found: list[tuple[int, int, int, int]] = []
    writes: run_dir.WholeWrites[tuple[int, int, int, int]] = run_dir.WholeWrites()
    with open(results_file, "rb") as f:
        for offset, line in run_dir.complete_lines(f, start):
            row = run_dir.parse_line(line)
            eid, idx = (
                (row.get("example_id"), row.get("rollout_index", 0)) if row is not None else (0, 0)
            )
            if eid.__class__ is not int or idx.__class__ is not int:
                return None
            found.extend(writes.take(row, (eid, offset, idx, len(line))))
    return np.array(found, dtype=ROW)
