"""Resuming a results directory in two streamed passes over its rows, holding ids only.

The first pass decides which saved rows a rerun keeps (per example, a bit per rollout index) and
which examples' inputs changed; nothing on disk changes before it is done. The second rewrites
the file with the kept rows and the rows of examples outside this run (a finished result is never
thrown away), hands each kept row on (live figures, the run's summary) and notes the attempts of
the rows that will be run again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from verifiers_lite.core.records import Row
from verifiers_lite.results.fingerprint import INPUT_HASH_KEY
from verifiers_lite.results.store import ResultsStore, RowReader, iter_rows


@dataclass
class SavedRows:
    """What the first pass found: per example, the rollout indices kept (bits of an int)."""

    rerun_errors: bool
    keep: dict[Any, int] = field(default_factory=dict)
    changed: list[Any] = field(default_factory=list)  # examples whose saved input differs
    dropped: int = 0  # saved rows (or torn lines) a rerun does not keep

    def is_done(self, example_id: Any, rollout_index: int) -> bool:
        return bool(self.keep.get(example_id, 0) >> rollout_index & 1)

    @property
    def num_kept(self) -> int:
        return sum(bits.bit_count() for bits in self.keep.values())


def _usable(row: Row, sizes: Mapping[Any, int], rerun_errors: bool) -> tuple[Any, int] | None:
    eid, idx = row.get("example_id"), row.get("rollout_index", 0)
    if (
        eid not in sizes
        or not isinstance(idx, int)
        or isinstance(idx, bool)
        or not 0 <= idx < sizes[eid]
    ):
        return None
    if rerun_errors and row.get("error"):
        return None
    return eid, idx


def scan_saved(
    store: ResultsStore,
    sizes: Mapping[Any, int],
    input_hash_of: Callable[[Any], str],
    independent: bool,
    rerun_errors: bool,
) -> SavedRows:
    """Finished rows still wanted: known examples, index < group size, no duplicates, no errors
    (unless ``rerun_errors`` is off); in grouped mode only whole groups (a group with a missing or
    errored rollout is rerun whole so its advantages stay right)."""
    found = SavedRows(rerun_errors)
    changed: set[Any] = set()
    last: tuple[Any, str] | None = None  # rows of one example come together: hash it once
    reader = RowReader(store.results_file)
    rows_in_run = 0
    for row in reader:
        eid = row.get("example_id")
        if eid in sizes:
            if last is None or last[0] != eid:
                last = (eid, input_hash_of(eid))
            if row.get(INPUT_HASH_KEY) != last[1] and eid not in changed:
                changed.add(eid)
                found.changed.append(eid)
            rows_in_run += 1
        key = _usable(row, sizes, rerun_errors)
        if key is not None:
            found.keep[key[0]] = found.keep.get(key[0], 0) | 1 << key[1]
    if not independent:
        full = {eid: bits for eid, bits in found.keep.items() if bits.bit_count() == sizes[eid]}
        found.keep = full
    found.dropped = reader.skipped + rows_in_run - found.num_kept
    return found


def rewrite_saved(
    store: ResultsStore,
    sizes: Mapping[Any, int],
    saved: SavedRows,
    on_kept: Callable[[Row], None],
) -> dict[tuple[Any, int], int]:
    """Rewrite the rows file with the kept rows (each handed to ``on_kept``) and those of other
    examples; returns the attempts so far of the saved rows that will be run again. When every
    saved row is kept the file is left as it is (outputs read from it stay valid)."""
    attempts: dict[tuple[Any, int], int] = {}
    written: dict[Any, int] = {}

    def kept() -> Iterator[Row]:
        for row in iter_rows(store.results_file):
            eid = row.get("example_id")
            if eid not in sizes:
                yield row
                continue
            key = _usable(row, sizes, saved.rerun_errors)
            if key is not None and saved.is_done(*key) and not written.get(eid, 0) >> key[1] & 1:
                written[eid] = written.get(eid, 0) | 1 << key[1]
                on_kept(row)
                yield row
            else:
                attempts[(eid, row.get("rollout_index", 0))] = int(row.get("attempts") or 1)

    if saved.dropped:
        store.rewrite(kept())
    else:
        for _ in kept():
            pass
    return attempts
