"""The store's group commit: groups that finish while an fsync is under way share the next one,
and no group is acknowledged before an fsync has covered its bytes."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest

from verifiers_lite.results.store import ResultsStore, read_rows


def group(eid: int, size: int = 3) -> list[dict]:
    return [
        {"example_id": eid, "rollout_index": i, "reward": float(i), "completion": []}
        for i in range(size)
    ]


def line_ends(results: Path) -> dict[int, int]:
    """Where each example's last line ends in the file, read independently of the store."""
    ends, offset = {}, 0
    for line in results.read_bytes().splitlines(keepends=True):
        offset += len(line)
        ends[json.loads(line)["example_id"]] = offset
    return ends


@pytest.mark.parametrize("fsync", [True, False])
async def test_groups_queued_during_an_fsync_share_the_next_one(
    tmp_path: Path, monkeypatch, fsync: bool
) -> None:
    store = ResultsStore(tmp_path, fsync=fsync)
    store.open({"run": 1})
    in_first_fsync, release = threading.Event(), threading.Event()
    synced: list[int] = []  # the file's size at each fsync
    real_fsync = os.fsync

    def fsync_spy(fd: int) -> None:
        size = os.fstat(fd).st_size
        if not synced:
            in_first_fsync.set()
            assert release.wait(30)  # hold the first fsync until the other groups are queued
        real_fsync(fd)
        synced.append(size)

    monkeypatch.setattr(os, "fsync", fsync_spy)
    acked: dict[int, int] = {}  # example_id -> bytes covered by an fsync when its write returned

    async def put(eid: int) -> None:
        await store.append_group_async(group(eid))
        acked[eid] = max(synced, default=0)

    first = asyncio.ensure_future(put(0))
    if fsync:
        assert await asyncio.to_thread(in_first_fsync.wait, 30)
    others = [asyncio.ensure_future(put(eid)) for eid in range(1, 10)]
    release.set()
    await asyncio.gather(first, *others)
    store.close()

    rows = read_rows(tmp_path / "results.jsonl")
    assert sorted((r["example_id"], r["rollout_index"]) for r in rows) == [
        (e, i) for e in range(10) for i in range(3)
    ]
    if fsync:
        assert len(synced) == 2  # group 0 alone, then the nine queued behind it together
        ends = line_ends(tmp_path / "results.jsonl")
        assert all(acked[eid] >= ends[eid] for eid in range(10)), (acked, ends)
    else:
        assert synced == []


async def test_a_failed_write_fails_every_group_waiting_on_it(tmp_path: Path, monkeypatch) -> None:
    store = ResultsStore(tmp_path, fsync=True)
    store.open({"run": 1})

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    results = await asyncio.gather(
        *(store.append_group_async(group(eid)) for eid in range(4)), return_exceptions=True
    )
    store.close()
    assert [type(r) for r in results] == [OSError] * 4
