"""Crash-safe results store: append-only ``results.jsonl`` written group by group + ``metadata.json``.

Each group is written with one ``write`` then flushed and fsynced, and every line carries the id
and size of the write it belongs to, so on load a torn or partial group is recognised and dropped:
a group is on disk whole or not at all.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from verifiers_lite.errors import ResumeMismatchError

RESULTS_FILE = "results.jsonl"
METADATA_FILE = "metadata.json"
_WRITE_ID, _WRITE_SIZE = "_write_id", "_write_size"


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


def read_rows(results_file: Path) -> list[dict[str, Any]]:
    """Rows of whole writes only; torn lines and partial groups are skipped."""
    if not results_file.exists():
        return []
    writes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    sizes: dict[str, int] = {}
    order: list[str] = []
    with open(results_file, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.endswith("\n"):
                break  # torn last line: the crash hit mid-write
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(row, dict):
                continue
            wid = row.pop(_WRITE_ID, None) or uuid.uuid4().hex
            size = row.pop(_WRITE_SIZE, 1)
            if wid not in sizes:
                order.append(wid)
            sizes[wid] = size
            writes[wid].append(row)
    return [row for wid in order if len(writes[wid]) == sizes[wid] for row in writes[wid]]


class ResultsStore:
    """Owns one results directory for one run (and its resumptions)."""

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.results_file = self.path / RESULTS_FILE
        self.metadata_file = self.path / METADATA_FILE
        self.fsync = fsync
        self._fd: int | None = None
        self._writer: ThreadPoolExecutor | None = None

    def open(
        self, metadata: dict[str, Any], check_same_run: Callable[[dict[str, Any]], None] | None = None,
    ) -> list[dict[str, Any]]:
        """Create or reopen the directory; returns the finished rows already on disk.

        ``check_same_run`` gets the saved metadata and raises (ResumeMismatchError) when the
        directory holds another run; nothing on disk changes before it has passed.
        """
        if self.path.exists() and not self.path.is_dir():
            raise ValueError(f"results_path {str(self.path)!r} exists and is not a directory")
        self.path.mkdir(parents=True, exist_ok=True)
        rows: list[dict[str, Any]] = []
        if self.metadata_file.exists():
            try:
                old = json.loads(self.metadata_file.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{self.metadata_file} is not valid JSON: {exc}") from exc
            if check_same_run is not None:
                check_same_run(old)
            rows = read_rows(self.results_file)
        elif self.results_file.exists() and self.results_file.stat().st_size > 0:
            raise ResumeMismatchError(
                f"{self.results_file} exists without {METADATA_FILE}: refusing to mix runs"
            )
        write_json_atomic(self.metadata_file, metadata)
        return rows

    def rewrite(self, rows: list[dict[str, Any]]) -> None:
        """Replace results.jsonl by ``rows`` (each as a whole write of its own group)."""
        tmp = self.results_file.with_name(f".{RESULTS_FILE}.tmp")
        groups: dict[Any, list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            groups[row.get("example_id")].append(row)
        with open(tmp, "w", encoding="utf-8") as f:
            for group in groups.values():
                f.write(self._encode(group))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.results_file)

    @staticmethod
    def _encode(rows: list[dict[str, Any]]) -> str:
        wid = uuid.uuid4().hex
        return "".join(_dumps({**r, _WRITE_ID: wid, _WRITE_SIZE: len(rows)}) + "\n" for r in rows)

    def append_group(self, rows: list[dict[str, Any]]) -> None:
        """Append one group with a single write; flushed and (by default) fsynced."""
        if not rows:
            return
        if self._fd is None:
            self._fd = os.open(self.results_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        data = self._encode(rows).encode("utf-8")
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        if self.fsync:
            os.fsync(self._fd)

    async def append_group_async(self, rows: list[dict[str, Any]]) -> None:
        """:meth:`append_group` on one dedicated writer thread: the event loop keeps running
        rollouts while a group is encoded and fsynced, and writes stay in order, one at a time."""
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="verifiers-lite-store")
        await asyncio.get_running_loop().run_in_executor(self._writer, self.append_group, rows)

    def write_metadata(self, metadata: dict[str, Any]) -> None:
        write_json_atomic(self.metadata_file, metadata)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.shutdown(wait=True)  # a group being written is finished, never torn by us
            self._writer = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
