"""Crash-safe results store: append-only ``results.jsonl`` written group by group + ``metadata.json``.

Each group is written with one ``write`` and fsynced before the run counts it, and every line
carries the id and size of the write it belongs to, so on load a torn or partial group is
recognised and dropped: a group is on disk whole or not at all. Groups that finish while an
fsync is under way are written together and share the next one (a group commit): what the run
has counted is on the disk, and an fsync per group no longer sets the pace. After each group, where
its lines lie is appended to the
row index beside it (:mod:`verifiers_lite.results.row_index`), so a run's rows can be read back
lazily without parsing the whole file.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

from verifiers_lite.core.errors import ResumeMismatchError
from verifiers_lite.core.records import Row
from verifiers_lite.results import row_index, run_dir
from verifiers_lite.results.run_dir import METADATA_FILE as METADATA_FILE
from verifiers_lite.results.run_dir import RESULTS_FILE as RESULTS_FILE
from verifiers_lite.results.run_metadata import FORMAT_VERSION, RunMetadata, read_run_metadata


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, default=str, allow_nan=True)


def write_json_atomic(path: Path, obj: Any) -> None:
    """Write JSON to ``path`` via a temp file + rename, so readers never see half a file."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(obj, ensure_ascii=False, default=str, indent=2))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class RowReader:
    """Rows of whole writes only, one at a time; torn lines and partial groups are skipped (and
    counted in ``skipped`` once read through). A write's rows come once its last line is read
    (writes are contiguous: one group is pending)."""

    def __init__(self, results_file: Path) -> None:
        self.results_file = results_file
        self.skipped = 0

    def __iter__(self) -> Iterator[Row]:
        if not self.results_file.exists():
            return
        tracebacks = run_dir.read_tracebacks(self.results_file.parent)
        writes: run_dir.WholeWrites[Row] = run_dir.WholeWrites()
        with open(self.results_file, "rb") as f:
            end = 0
            for offset, line in run_dir.complete_lines(f):
                end = offset + len(line)
                row = run_dir.parse_line(line)
                for whole in writes.take(row, cast(Row, row)):
                    yield run_dir.restore_traceback(whole, tracebacks) if tracebacks else whole
            torn = int(os.fstat(f.fileno()).st_size > end)  # a last line without its newline
        self.skipped += writes.unreadable + writes.partial + torn


def iter_rows(results_file: Path) -> Iterator[Row]:
    """:class:`RowReader`'s rows."""
    return iter(RowReader(results_file))


def read_rows(results_file: Path) -> list[Row]:
    """Rows of whole writes only (every row in memory; :func:`iter_rows` streams them)."""
    return list(iter_rows(results_file))


class ResultsStore:
    """Owns one results directory for one run (and its resumptions)."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.results_file = self.path / RESULTS_FILE
        self.metadata_file = self.path / METADATA_FILE
        self.fsync = fsync
        self._fd: int | None = None
        self._index: row_index.IndexWriter | None = None
        self._writer: ThreadPoolExecutor | None = None
        self._pending: list[tuple[list[Row], asyncio.Future[None]]] = []
        self._lock = threading.Lock()
        self._tracebacks: set[str] | None = None  # keys in tracebacks.jsonl (read on first write)

    def _save_tracebacks(self, groups: Iterable[list[Row]]) -> None:
        """Append the groups' tracebacks the run has not stored yet, before the rows naming
        them (a crash in between leaves a text no row names, never a row without its text)."""
        if self._tracebacks is None:
            self._tracebacks = set(run_dir.read_tracebacks(self.path))
        lines = [line for rows in groups for line in run_dir.new_tracebacks(rows, self._tracebacks)]
        if not lines:
            return
        with open(self.path / run_dir.TRACEBACKS_FILE, "ab") as f:
            f.write(b"".join(lines))
            f.flush()
            if self.fsync:
                os.fsync(f.fileno())

    def open(
        self,
        metadata: RunMetadata,
        check_same_run: Callable[[RunMetadata], None] | None = None,
    ) -> bool:
        """Create or reopen the directory; True when it holds an earlier run whose finished rows
        (:func:`iter_rows`) may be resumed.

        ``check_same_run`` gets the saved metadata and raises (ResumeMismatchError) when the
        directory holds another run; nothing on disk changes before it has passed.
        """
        if self.path.exists() and not self.path.is_dir():
            raise ValueError(f"results_path {str(self.path)!r} exists and is not a directory")
        self.path.mkdir(parents=True, exist_ok=True)
        resuming = False
        if self.metadata_file.exists():
            old = read_run_metadata(self.path)
            if check_same_run is not None:
                check_same_run(old)
            resuming = True
        elif self.results_file.exists() and self.results_file.stat().st_size > 0:
            raise ResumeMismatchError(
                f"{self.results_file} exists without {METADATA_FILE}: refusing to mix runs"
            )
        write_json_atomic(self.metadata_file, metadata)
        return resuming

    def rewrite(self, rows: Iterable[Row]) -> None:
        """Replace results.jsonl by ``rows``, streamed: consecutive rows of one example are one
        write. The row index is removed first and written anew after, so a crash in between
        leaves no index (rebuilt from the rows when read), never a stale one."""
        tmp = self.results_file.with_name(f".{RESULTS_FILE}.tmp")
        index = row_index.IndexWriter(self.path, fresh=True)
        with open(tmp, "wb") as f:

            def write(group: list[Row]) -> None:
                self._save_tracebacks([group])
                lines = self._encode(group)
                index.append(group, f.tell(), lines)
                f.write(b"".join(lines))

            group: list[Row] = []
            for row in rows:
                if group and row.get("example_id") != group[-1].get("example_id"):
                    write(group)
                    group = []
                group.append(row)
            if group:
                write(group)
            f.flush()
            os.fsync(f.fileno())
        row_index.remove(self.path)
        os.replace(tmp, self.results_file)
        index.commit()

    @staticmethod
    def _encode(rows: list[Row]) -> list[bytes]:
        """One group's lines, each tagged with the write's id and size."""
        wid = uuid.uuid4().hex
        return run_dir.encode_write(rows, wid, _dumps)

    def append_group(self, rows: list[Row]) -> None:
        """Append one group with a single write; fsynced (by default); then its lines' places
        to the row index."""
        self._write_groups([rows])

    def _write_groups(self, groups: list[list[Row]]) -> None:
        """Each group with its own write, then one fsync for them all."""
        self._save_tracebacks(groups)
        for rows in groups:
            if not rows:
                continue
            if self._fd is None:
                self._fd = os.open(self.results_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                self._index = row_index.IndexWriter(self.path)
            lines = self._encode(rows)
            offset = os.fstat(self._fd).st_size  # one writer: the group lands at the current end
            view = memoryview(b"".join(lines))
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            assert self._index is not None
            self._index.append(rows, offset, lines)
        if self.fsync and self._fd is not None:
            os.fsync(self._fd)

    async def append_group_async(self, rows: list[Row]) -> None:
        """:meth:`append_group` on one dedicated writer thread, returning once the group is on
        disk: the event loop keeps running rollouts meanwhile, writes stay in order, and the
        groups that arrive during one write share the next fsync."""
        done = asyncio.get_running_loop().create_future()
        with self._lock:
            self._pending.append((rows, done))
            start = (
                len(self._pending) == 1
            )  # else a write is queued already and will take this group
        if start:
            if self._writer is None:
                self._writer = ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="verifiers-lite-store"
                )
            self._writer.submit(self._write_pending)
        await done

    def _write_pending(self) -> None:
        """On the writer thread: write every queued group, fsync once, wake their writers."""
        with self._lock:  # groups queued from now on start the next write
            batch, self._pending = self._pending, []
        error: BaseException | None = None
        try:
            self._write_groups([rows for rows, _ in batch])
        except BaseException as exc:  # every waiting group learns that its write failed
            error = exc
        for _, done in batch:
            with contextlib.suppress(
                RuntimeError
            ):  # its event loop is gone (the run was torn down)
                done.get_loop().call_soon_threadsafe(_settle, done, error)

    def write_metadata(self, metadata: RunMetadata) -> None:
        """``metadata.json``, stamped with the format this store writes."""
        metadata["format_version"] = FORMAT_VERSION
        write_json_atomic(self.metadata_file, metadata)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.shutdown(wait=True)  # a group being written is finished, never torn by us
            self._writer = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._index is not None:
            self._index.close()
            self._index = None


def _settle(done: asyncio.Future[None], error: BaseException | None) -> None:
    if done.cancelled():
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)
