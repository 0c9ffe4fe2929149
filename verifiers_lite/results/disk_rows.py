"""A run's rows left on disk: a read-only sequence over ``results.jsonl`` through its row index.

Memory holds two integers per row (where its line lies); a row is parsed when it is asked for,
so ``len``, iteration and indexing cost no more than the rows in hand.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import overload

import numpy as np

from verifiers_lite.core.records import Row
from verifiers_lite.results import row_index, run_dir
from verifiers_lite.results.row_index import StaleRowsError

_READ_BUFFER = 1 << 20


class DiskRows(Sequence[Row]):
    """The rows of one ``results.jsonl``, read on demand."""

    def __init__(
        self, results_file: Path, offsets: np.ndarray, lengths: np.ndarray, inode: int
    ) -> None:
        self.results_file = results_file
        self._offsets = offsets
        self._lengths = lengths
        self._inode = inode

    @classmethod
    def open(
        cls,
        results_file: str | os.PathLike[str],
        example_ids: Iterable[int] | None = None,
        sort: bool = False,
    ) -> DiskRows | None:
        """The whole rows of ``results_file`` (only those of ``example_ids`` when given), in file
        order or (``sort``) by example and rollout as a run's outputs are; None when its rows
        cannot be indexed (ids that are not integers)."""
        path = Path(results_file)
        try:
            inode = path.stat().st_ino
        except FileNotFoundError:
            return None
        records = row_index.load(path)
        if records is None:
            return None
        if example_ids is not None:
            wanted = np.isin(records["example_id"], np.fromiter(example_ids, dtype=np.int64))
            if not wanted.all():  # rows of examples outside the run: copy the others out
                records = records[wanted]
            del wanted
        if not sort:
            return cls(path, records["offset"].copy(), records["length"].copy(), inode)
        order = _sorted_order(records)
        return cls(path, records["offset"][order], records["length"][order], inode)

    def __len__(self) -> int:
        return len(self._offsets)

    @overload
    def __getitem__(self, i: int) -> Row: ...
    @overload
    def __getitem__(self, i: slice) -> list[Row]: ...
    def __getitem__(self, i: int | slice) -> Row | list[Row]:
        if isinstance(i, slice):
            return list(self._read(range(len(self))[i]))
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"row {i} out of range ({n} rows)")
        return next(self._read([i % n]))

    def __iter__(self) -> Iterator[Row]:
        return self._read(range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def take(self, positions: Sequence[int]) -> DiskRows:
        """These rows only (positions into this sequence), as another lazy sequence."""
        pos = np.asarray(positions, dtype=np.int64)
        return DiskRows(self.results_file, self._offsets[pos], self._lengths[pos], self._inode)

    def _read(self, positions: Iterable[int]) -> Iterator[Row]:
        with open(self.results_file, "rb", buffering=_READ_BUFFER) as f:
            if os.fstat(f.fileno()).st_ino != self._inode:
                raise StaleRowsError(
                    f"{self.results_file} was replaced after these outputs were read (a resumed run "
                    "rewrites it): load the run again with vf.load_results(path)"
                )
            offsets, lengths = self._offsets, self._lengths
            tracebacks = run_dir.read_tracebacks(self.results_file.parent)
            for i in positions:
                f.seek(int(offsets[i]))
                yield run_dir.read_row(f.read(int(lengths[i])), tracebacks)

    def __repr__(self) -> str:
        return f"DiskRows({str(self.results_file)!r}, {len(self)} rows)"


def _sorted_order(records: np.ndarray) -> np.ndarray:
    """Positions by example_id, then rollout_index; ties keep file order. One packed int64 key
    when the ids fit (8 bytes a row beside the order), else a two-key sort."""
    eid, idx = records["example_id"], records["rollout_index"]
    if (
        len(records)
        and int(idx.min()) >= 0
        and int(idx.max()) < 1 << 20
        and int(eid.min()) >= -(1 << 42)
        and int(eid.max()) < 1 << 42
    ):
        key = eid << 20
        key |= idx
        return np.argsort(key, kind="stable")
    return np.lexsort((idx, eid))
