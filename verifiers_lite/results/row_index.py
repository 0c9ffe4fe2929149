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

Readers keep the live form of the same index, :class:`RowIndex`: per row where its line lies and
the columns the viewer filters and sorts on (the indexed ones of ``core.columns``) in typed
arrays, with the run's summary over them (:class:`~verifiers_lite.core.summary.RunSummary`); it
follows a file being appended (new rows are picked up on the next :meth:`RowIndex.scan`), honours
the same torn-write rule, and starts over when the file is replaced (a resumed run rewrites it).
A read planned on a replaced file raises :class:`StaleRowsError`, the one staleness error of every
reader of the rows (the lazy outputs' :class:`~verifiers_lite.results.disk_rows.DiskRows` too).
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
import time
from array import array
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.core import columns
from verifiers_lite.core.records import TIMING_PARTS, Row
from verifiers_lite.core.summary import RunSummary
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


class StaleRowsError(VerifiersError, RuntimeError):
    """The results file was replaced (a resumed run rewrites it) after these rows were indexed."""


_HEAD = b'{"example_id": '
_REWARD_KEY = b', "reward": '
_INT_IDS = re.compile(rb'\{"example_id": (-?\d+), "rollout_index": (\d+), ')
_DECODER = json.JSONDecoder()
NAN = float("nan")


def _num(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return NAN


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    if value.__class__ is int:
        return int(value)
    v = _num(value)
    return int(v) if math.isfinite(v) else 0


def _fields(line: bytes) -> dict[str, Any] | None:
    """The indexed fields of one line. Fast path: parse only the line's tail from its top-level
    ``"reward"`` key on (prompt and completion, the bulk of a row, come before it) plus the
    leading ids; any surprise falls back to a full parse. A cut inside a nested object leaves
    unbalanced braces, so a wrong cut always fails to parse instead of giving wrong fields."""
    if line.startswith(_HEAD):
        cut = line.rfind(_REWARD_KEY)
        if cut > 0:
            try:
                tail = json.loads(b"{" + line[cut + 2 :])
                ids = _INT_IDS.match(line)
                if ids is not None and isinstance(tail, dict):  # integer ids: no decoding at all
                    tail["example_id"], tail["rollout_index"] = int(ids[1]), int(ids[2])
                    return tail
                head = line[:512].decode("utf-8", "replace")
                eid, end = _DECODER.raw_decode(head, len(_HEAD))
                key = ', "rollout_index": '
                if isinstance(tail, dict) and head.startswith(key, end):
                    tail["rollout_index"], _ = _DECODER.raw_decode(head, end + len(key))
                    tail["example_id"] = eid
                    return tail
            except ValueError:
                pass
    return run_dir.parse_line(line)


class _Columns:
    """Column arrays of the committed rows, in file order: where each line lies, the example
    ids, the metrics, and one array per indexed column (``values``: numbers, NaN or 0 where a
    row has none; ``codes``: a menu column's values as indices into ``RowIndex.names``)."""

    def __init__(self, indexed: tuple[columns.Column, ...]) -> None:
        self.offset = array("q")
        self.length = array("q")
        self.example_id: list[Any] = []
        self.metrics: dict[str, array] = {}
        self.values: dict[str, array] = {
            c.name: array("q" if c.kind == "int" else "d")
            for c in indexed
            if c.kind in ("int", "float")
        }
        self.codes: dict[str, array] = {c.name: array("i") for c in indexed if c.filter == "choice"}

    def __getattr__(self, name: str) -> array:
        """A numeric column by name (``cols.reward``); ``stop``/``error`` are the codes of the
        stop reason and the error category."""
        got = self.__dict__.get("values", {}).get(name)
        if got is None:
            got = self.__dict__.get("codes", {}).get(_CODE_NAMES.get(name, name))
        if got is None:
            raise AttributeError(name)
        return got

    @property
    def timing(self) -> dict[str, array]:
        """The parts of a rollout's time (records.TIMING_PARTS)."""
        return {k: self.values[k] for k, _ in TIMING_PARTS if k in self.values}


_CODE_NAMES = {"stop": "stop_reason", "error": "error_category"}


class RowIndex:
    """Index of one ``results.jsonl``; thread-safe, rebuilt when the file is replaced."""

    CHUNK = 1024  # lines per scan step: a long first scan lets other requests in between steps

    def __init__(self, results_file: Path) -> None:
        self.path = results_file
        self._lock = threading.RLock()
        self.generation = 0  # counts rebuilds: a read planned on an older index is refused
        self._reset(None)

    def _reset(self, inode: int | None) -> None:
        layout = columns.current()
        self.cols = _Columns(layout.indexed)
        # Per indexed column: the row key and part it is read from, or its derive function.
        self._numbers = [
            (self.cols.values[c.name], c.row_key, c.part, c.derive, c.kind == "int")
            for c in layout.indexed
            if c.name in self.cols.values
        ]
        # A menu column's codes, its values by code (code 0: none) and codes by value.
        self._menus: list[tuple[array, columns.Column, list[str | None], dict[str, int]]] = [
            (self.cols.codes[c.name], c, [None], {}) for c in layout.indexed if c.filter == "choice"
        ]
        self.names: dict[str, list[str | None]] = {c.name: names for _, c, names, _ in self._menus}
        # The fast path parses a line from its reward on (and its ids): a column read from a
        # key before it, or from keys unknown, needs whole lines.
        keys = layout.row_keys
        early = set(keys[: keys.index("reward")]) - {"example_id", "rollout_index"}
        self._whole_lines = any(c.source in early or c.source is None for c in layout.indexed)
        self._pos = 0
        self._inode = inode
        self._writes: run_dir.WholeWrites[tuple[int, int, dict[str, Any]]] = run_dir.WholeWrites()
        self.generation += 1
        self.at_eof = False
        # The run's summary over the committed rows: the same accumulator a live run feeds.
        self.summary = RunSummary()

    def __len__(self) -> int:
        return len(self.cols.offset)

    def summary_figures(self) -> dict[str, Any]:
        """:meth:`RunSummary.summary` of the rows indexed so far (taken between scan steps)."""
        with self._lock:
            return self.summary.summary()

    @property
    def stop_names(self) -> list[str | None]:
        return self.names.get("stop_reason", [None])

    @property
    def error_names(self) -> list[str | None]:
        return self.names.get("error_category", [None])

    # -- scanning ------------------------------------------------------------------------------

    def scan(self, min_rows: int | None = None, budget_s: float | None = None) -> None:
        """Index newly written lines: all of them, or (``min_rows``) until that many rows are
        indexed, so a first page need not wait for a 100k-row file. With ``min_rows`` already
        indexed and the file not yet read to its end, returns at once: whoever reads the rest
        (a background scan) holds the lock, and the page need not wait for it. ``budget_s``
        stops after that many seconds (``at_eof`` then says whether the file was read through)."""
        if min_rows is not None and len(self) >= min_rows and not self.at_eof:
            return
        deadline = None if budget_s is None else time.monotonic() + budget_s
        while True:
            with self._lock:
                self._check_replaced()
                if self._step():
                    return
                if min_rows is not None and len(self) >= min_rows:
                    return
            if deadline is not None and time.monotonic() > deadline:
                return

    def _check_replaced(self) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            if self._pos:
                self._reset(None)
            self.at_eof = True
            return
        if self._inode is None:
            self._inode = st.st_ino
        elif st.st_ino != self._inode or st.st_size < self._pos:
            self._reset(st.st_ino)
        self.at_eof = st.st_size == self._pos

    def _step(self) -> bool:
        """Index up to CHUNK complete lines; True when the end of the file was reached (or a
        torn last line, still being written)."""
        if self.at_eof:
            return True
        try:
            with open(self.path, "rb") as f:
                for taken, (offset, line) in enumerate(run_dir.complete_lines(f, self._pos), 1):
                    self._pos = offset + len(line)
                    row = run_dir.parse_line(line) if self._whole_lines else _fields(line)
                    whole = (
                        self._writes.take(row, (offset, len(line), row)) if row is not None else ()
                    )
                    for o, n, r in whole:  # a line that is not a JSON object is skipped
                        self._commit(o, n, r)
                    if taken == self.CHUNK:
                        return False
        except FileNotFoundError:
            return True
        self.at_eof = True
        return True

    @staticmethod
    def _code(names: list[str | None], codes: dict[str, int], value: Any) -> int:
        if value is None:
            return 0
        key = value if isinstance(value, str) else str(value)
        code = codes.get(key)
        if code is None:
            code = codes[key] = len(names)
            names.append(key)
        return code

    def _commit(self, offset: int, length: int, row: dict[str, Any]) -> None:
        # The hot loop of indexing (100k calls for a large run): plain appends, few helpers.
        c = self.cols
        n = len(c.offset)
        c.offset.append(offset)
        c.length.append(length)
        for values, key, part, derive, whole in self._numbers:
            if derive is not None:
                v = derive(row)
            else:
                v = row.get(key)  # type: ignore[arg-type]  # not derived: it has a row key
                if part is not None:
                    v = v.get(part) if v.__class__ is dict else None
            if whole:
                values.append(v if v.__class__ is int else _int(v))
            else:
                values.append(float(v) if v.__class__ in (float, int) else NAN)
        for codes, column, names, known in self._menus:
            codes.append(self._code(names, known, column.value(row)))
        c.example_id.append(row.get("example_id"))
        self.summary.add(row)
        metrics = _dict(row.get("metrics"))
        for name, value in metrics.items():
            col = c.metrics.get(name)
            if col is None:  # a metric first seen late: earlier rows lack it
                col = c.metrics[name] = array("d", [NAN]) * n
            col.append(float(value) if value.__class__ in (float, int) else NAN)
        if len(metrics) != len(c.metrics):  # this row lacks some metric: pad its column
            for col in c.metrics.values():
                if len(col) == n:
                    col.append(NAN)

    # -- reading rows back ---------------------------------------------------------------------

    def read(self, positions: list[int], generation: int | None = None) -> list[Row]:
        """The full rows at these index positions, read from disk; StaleRowsError when the
        index was rebuilt since ``generation`` (positions from before refer to another file)."""
        # No lock: the column arrays only grow, and a rebuild (new generation, new arrays) is
        # detected after the spans are taken, so a page never waits for an indexing step.
        cols, inode = self.cols, self._inode
        spans = [(cols.offset[i], cols.length[i]) for i in positions]
        if (generation is not None and generation != self.generation) or cols is not self.cols:
            raise StaleRowsError(str(self.path))
        out: list[Row] = []
        if not spans:
            return out
        with open(self.path, "rb") as f:
            if os.fstat(f.fileno()).st_ino != inode:
                raise StaleRowsError(str(self.path))
            tracebacks = run_dir.read_tracebacks(Path(self.path).parent)
            for offset, length in spans:
                f.seek(offset)
                out.append(run_dir.read_row(f.read(length), tracebacks))
        return out

    def raw_lines(self, positions: list[int]) -> list[bytes]:
        """The raw JSON lines at these positions (for a fast text pre-filter)."""
        cols = self.cols
        spans = [(cols.offset[i], cols.length[i]) for i in positions]
        with open(self.path, "rb") as f:
            out = []
            for offset, length in spans:
                f.seek(offset)
                out.append(f.read(length))
            return out

    def positions_of(self, example_id: str) -> list[int]:
        """Positions of an example's rows; ``example_id`` as text (as in a URL). Ids are compared
        as numbers first when the text is one (the common case, and no str() per row)."""
        ids = self.cols.example_id
        if example_id.lstrip("-").isdigit() and str(int(example_id)) == example_id:
            number = int(example_id)
            found = [i for i, v in enumerate(ids) if v == number and v.__class__ is int]
            if found:
                return found
        return [i for i, v in enumerate(ids) if str(v) == example_id]

    def error_name(self, i: int) -> str | None:
        return self.error_names[self.cols.error[i]]

    def is_scored(self, i: int) -> bool:
        return not math.isnan(self.cols.reward[i])
