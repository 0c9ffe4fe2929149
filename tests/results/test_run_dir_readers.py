"""Every reader of a run directory's ``results.jsonl`` sees the same whole writes.

The test writes the file's bytes itself (tagged writes, as the store lays them out), so what a
reader must return is known without any reader: the rows of the writes all of whose bytes are
on disk. The store's reader, the row index (through the lazy rows) and the viewer's index are
each compared with that, after a torn last line, a write cut short among whole ones, lines that
are not rows, and at every point of a writer appending while they read.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from verifiers_lite.results.disk_rows import DiskRows
from verifiers_lite.results.row_index import RowIndex
from verifiers_lite.results.store import ResultsStore, read_rows


def make_row(eid: int, idx: int, note: str = "") -> dict[str, Any]:
    return {
        "example_id": eid,
        "rollout_index": idx,
        "prompt": [{"role": "user", "content": f"q{eid}{note}"}],
        "completion": [{"role": "assistant", "content": f"a{eid}.{idx}"}],
        "reward": float(idx % 2),
        "metrics": {"m": float(idx)},
        "stop_reason": "stop",
        "error": None,
        "turns": 1,
    }


def encode(rows: list[dict[str, Any]], wid: str | None) -> bytes:
    """One write as the store lays it out: each line tagged with the write's id and size
    (``wid`` None: untagged single lines, as older runs hold)."""
    tags = {} if wid is None else {"_write_id": wid, "_write_size": len(rows)}
    return b"".join((json.dumps({**r, **tags}) + "\n").encode() for r in rows)


def readings(path: Path, viewer: RowIndex | None = None) -> dict[str, list[dict[str, Any]]]:
    """The rows each reader finds in ``path`` (the viewer's index, when given, follows the file)."""
    viewer = viewer or RowIndex(path)
    viewer.scan()
    viewed = viewer.read(list(range(len(viewer))))
    lazy = DiskRows.open(path) if path.exists() else []  # before the writer's first group: no file
    assert lazy is not None  # integer ids: the row index covers every row
    return {"store": read_rows(path), "row index": list(lazy), "viewer": viewed}


def assert_all_read(
    path: Path, expected: list[dict[str, Any]], viewer: RowIndex | None = None
) -> None:
    for reader, rows in readings(path, viewer).items():
        assert rows == expected, reader


def test_torn_last_line_is_no_row(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    whole = [make_row(0, 0), make_row(0, 1)]
    single = [make_row(1, 0)]
    torn = encode([make_row(2, 0)], None)
    path.write_bytes(encode(whole, "w0") + encode(single, None) + torn[:-1])  # all but its newline
    assert_all_read(path, whole + single)


def test_write_cut_short_among_whole_ones_and_lines_that_are_not_rows(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    first, cut, last = (
        [make_row(0, i) for i in range(3)],
        [make_row(1, i) for i in range(3)],
        [make_row(2, 0), make_row(2, 1)],
    )
    odd = make_row(3, 0, note="\ufffd")
    # Bytes that are not UTF-8 in a row's text read as replacement characters, by every reader.
    not_utf8 = encode([make_row(3, 0, note="@")], None).replace(b"@", b"\xff")
    assert b"\xff" in not_utf8
    # Several writes in one append (a group commit), one of them cut short (two lines of three).
    cut_lines = encode(cut, "w1").splitlines(keepends=True)
    data = (
        encode(first, "w0")
        + b"".join(cut_lines[:2])
        + b"[1, 2]\n"
        + b"not json\n"
        + encode(last, "w2")
        + not_utf8
    )
    path.write_bytes(data)
    assert_all_read(path, first + last + [odd])


def test_every_point_of_an_append_reads_whole_writes_only(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    writes = [[make_row(e, i) for i in range(1 + e % 3)] for e in range(6)]
    data, ends = b"", []
    for e, rows in enumerate(writes):
        data += encode(rows, f"w{e}" if len(rows) > 1 else None)
        ends.append(len(data))
    path.write_bytes(b"")
    viewer = RowIndex(path)  # one index following the file, as the viewer's does
    cuts = sorted(set(range(0, len(data), 97)) | set(ends) | {e - 1 for e in ends})
    for cut in cuts:
        with open(path, "ab") as f:
            f.write(data[path.stat().st_size : cut])
        expected = [
            row for rows, end in zip(writes, ends, strict=True) if end <= cut for row in rows
        ]
        assert_all_read(path, expected, viewer)


def test_readers_alongside_the_store_writing(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path, fsync=False)
    store.open({})
    groups = [[make_row(e, i) for i in range(3)] for e in range(40)]
    done = threading.Event()

    def write() -> None:
        for rows in groups:
            store.append_group(rows)
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    viewer = RowIndex(store.results_file)
    try:
        while True:
            finished = done.is_set()  # read after the writer said so: the last reading sees it all
            for reader, rows in readings(store.results_file, viewer).items():
                n = len(rows)
                assert n % 3 == 0, reader  # whole groups only
                assert rows == [row for rows in groups for row in rows][:n], reader
            if finished:
                break
    finally:
        writer.join()
        store.close()
    assert_all_read(store.results_file, [row for rows in groups for row in rows], viewer)
