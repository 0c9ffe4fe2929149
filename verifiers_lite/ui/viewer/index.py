"""An offset index over one run's ``results.jsonl``: a few numbers per row, never the rows.

The index keeps, per row, where its line lies in the file and the columns the viewer filters
and sorts on (the indexed ones of ``core.columns``: reward, tokens, timing, ...; the error
category and stop reason as codes; the metrics) in typed arrays, so
100k rows cost a few MB; a page reads its own lines back from disk. It follows a file being
appended (new rows are picked up on the next :meth:`RowIndex.scan`), honours the store's torn-write
format (a group's rows appear only once every line of its write is on disk) and starts over when
the file is replaced (a resumed run rewrites it).
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
from typing import Any

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.core import columns
from verifiers_lite.core.records import TIMING_PARTS, Row
from verifiers_lite.core.summary import RunSummary
from verifiers_lite.results import run_dir

_HEAD = b'{"example_id": '
_REWARD_KEY = b', "reward": '
_INT_IDS = re.compile(rb'\{"example_id": (-?\d+), "rollout_index": (\d+), ')
_DECODER = json.JSONDecoder()
NAN = float("nan")


class StaleIndexError(VerifiersError, RuntimeError):
    """The file was replaced between indexing and reading: rebuild and retry."""


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
        """The full rows at these index positions, read from disk; StaleIndexError when the
        index was rebuilt since ``generation`` (positions from before refer to another file)."""
        # No lock: the column arrays only grow, and a rebuild (new generation, new arrays) is
        # detected after the spans are taken, so a page never waits for an indexing step.
        cols, inode = self.cols, self._inode
        spans = [(cols.offset[i], cols.length[i]) for i in positions]
        if (generation is not None and generation != self.generation) or cols is not self.cols:
            raise StaleIndexError(str(self.path))
        out: list[Row] = []
        if not spans:
            return out
        with open(self.path, "rb") as f:
            if os.fstat(f.fileno()).st_ino != inode:
                raise StaleIndexError(str(self.path))
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
