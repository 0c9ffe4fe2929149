"""An offset index over one run's ``results.jsonl``: a few numbers per row, never the rows.

The index keeps, per row, where its line lies in the file and the columns the viewer filters
and sorts on (reward, metrics, error category, stop reason, tokens, timing) in typed arrays, so
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifiers_lite.core.records import TIMING_PARTS, Row
from verifiers_lite.results import run_dir

_HEAD = b'{"example_id": '
_REWARD_KEY = b', "reward": '
_INT_IDS = re.compile(rb'\{"example_id": (-?\d+), "rollout_index": (\d+), ')
_DECODER = json.JSONDecoder()
NAN = float("nan")


class StaleIndexError(RuntimeError):
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


@dataclass
class _Columns:
    """Column arrays of the committed rows, in file order."""

    offset: array = field(default_factory=lambda: array("q"))
    length: array = field(default_factory=lambda: array("q"))
    reward: array = field(default_factory=lambda: array("d"))
    rollout_index: array = field(default_factory=lambda: array("q"))
    turns: array = field(default_factory=lambda: array("q"))
    stop: array = field(default_factory=lambda: array("i"))
    error: array = field(default_factory=lambda: array("i"))
    prompt_tokens: array = field(default_factory=lambda: array("q"))
    completion_tokens: array = field(default_factory=lambda: array("q"))
    rollout_ms: array = field(default_factory=lambda: array("d"))  # the rollout's own time
    total_ms: array = field(default_factory=lambda: array("d"))  # ... until its group was scored
    # its parts (records.TIMING_PARTS: slot wait, model request, environment, group wait, scoring)
    timing: dict[str, array] = field(
        default_factory=lambda: {k: array("d") for k, _ in TIMING_PARTS}
    )
    example_id: list[Any] = field(default_factory=list)
    metrics: dict[str, array] = field(default_factory=dict)


class RowIndex:
    """Index of one ``results.jsonl``; thread-safe, rebuilt when the file is replaced."""

    CHUNK = 1024  # lines per scan step: a long first scan lets other requests in between steps

    def __init__(self, results_file: Path) -> None:
        self.path = results_file
        self._lock = threading.RLock()
        self.generation = 0  # counts rebuilds: a read planned on an older index is refused
        self._reset(None)

    def _reset(self, inode: int | None) -> None:
        self.cols = _Columns()
        self.stop_names: list[str | None] = [None]  # code 0: none
        self.error_names: list[str | None] = [None]
        self._stop_codes: dict[str, int] = {}
        self._error_codes: dict[str, int] = {}
        self._pos = 0
        self._inode = inode
        self._writes: run_dir.WholeWrites[tuple[int, int, dict[str, Any]]] = run_dir.WholeWrites()
        self.generation += 1
        self.at_eof = False

    def __len__(self) -> int:
        return len(self.cols.offset)

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
                    row = _fields(line)
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
        # The hot loop of indexing (100k calls for a large run): plain appends, no helpers.
        c = self.cols
        n = len(c.offset)
        c.offset.append(offset)
        c.length.append(length)
        reward = row.get("reward")
        c.reward.append(float(reward) if reward.__class__ in (float, int) else NAN)
        idx = row.get("rollout_index")
        c.rollout_index.append(idx if idx.__class__ is int else 0)
        turns = row.get("turns")
        c.turns.append(turns if turns.__class__ is int else 0)
        c.stop.append(self._code(self.stop_names, self._stop_codes, row.get("stop_reason")))
        err = row.get("error")
        category = (
            (err.get("category") or "unknown")
            if isinstance(err, dict)
            else ("unknown" if err else None)
        )
        c.error.append(self._code(self.error_names, self._error_codes, category))
        usage = _dict(row.get("usage"))
        c.prompt_tokens.append(_int(usage.get("prompt_tokens")))
        c.completion_tokens.append(_int(usage.get("completion_tokens")))
        timing = _dict(row.get("timing"))
        own, total = timing.get("rollout_ms"), timing.get("total_ms")
        c.rollout_ms.append(float(own) if own.__class__ in (float, int) else NAN)
        c.total_ms.append(float(total) if total.__class__ in (float, int) else NAN)
        for key, part_col in c.timing.items():
            part = timing.get(key)
            part_col.append(float(part) if part.__class__ in (float, int) else NAN)
        c.example_id.append(row.get("example_id"))
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
            for offset, length in spans:
                f.seek(offset)
                out.append(run_dir.read_row(f.read(length)))
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
