"""Outputs of a run with results_path read lazily from disk equal the same rows held in memory.

The reference for each comparison is computed without the lazy reader: rows read back by the
store's plain reader (every row in memory, as before), or a second run of the same
deterministic client without results_path; figures (reward mean, pass@k) are computed here by
hand from those rows.
"""

from __future__ import annotations

import gc
import json
import math
import statistics
import tempfile
import tracemalloc
from math import comb
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

import verifiers_lite as vf
from verifiers_lite.results import export
from verifiers_lite.results.disk_rows import DiskRows, StaleRowsError
from verifiers_lite.results.flat_rows import flatten_row
from verifiers_lite.results.row_index import INDEX_FILE, RECORD
from verifiers_lite.results.store import read_rows
from verifiers_lite.rollout import TokenClient
from verifiers_lite.rollout.testing import ScriptedSampler, toy_template

N_EXAMPLES, PER_EXAMPLE = 12, 3
VOLATILE = ("trajectory_id", "timing")  # differ between two runs of the same script


def reply(prompt: str) -> str:
    """Example i: a model error when i % 5 == 4; else right on rollouts whose seed is even."""
    i = int(prompt.rsplit("question ", 1)[1].split()[0])
    if i % 5 == 4:
        raise RuntimeError(f"model down for question {i}")
    return f"answer {i}" if i % 3 else f"answer {i + 1}"


def correct(completion, answer) -> float:
    return float((completion[-1]["content"] or "").strip() == answer)


def length(completion) -> float:
    return float(len(completion[-1]["content"] or ""))


def make_env(n: int = N_EXAMPLES) -> vf.SingleTurnEnv:
    rows = [{"question": f"question {i} here", "answer": f"answer {i}"} for i in range(n)]
    return vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric([correct, length], weights=[1.0, 0.0]))


def client() -> TokenClient:
    template = toy_template()
    return TokenClient(ScriptedSampler(template, reply), template)


def run(results_path: Path | None, n: int = N_EXAMPLES, **kw) -> vf.GenerateOutputs:
    return make_env(n).evaluate_sync(
        client(),
        "toy",
        rollouts_per_example=PER_EXAMPLE,
        progress=False,
        results_path=str(results_path) if results_path else None,
        **kw,
    )


def reference(results_dir: Path, example_ids=None, sort: bool = True) -> list[dict]:
    """The rows on disk read by the store's plain reader, as a finished run returns them."""
    rows = [
        r
        for r in read_rows(results_dir / "results.jsonl")
        if example_ids is None or r["example_id"] in example_ids
    ]
    return sorted(rows, key=lambda r: (r["example_id"], r["rollout_index"])) if sort else rows


def comparable(summary: dict) -> dict:
    """A summary with NaN (an undefined figure) read as None, so two equal summaries compare equal;
    ``timing_ms`` dropped when two separate runs are compared (their wall times differ)."""

    def plain(v):
        if isinstance(v, float) and math.isnan(v):
            return None
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v

    return plain(summary)


def separate_runs(summary: dict) -> dict:
    return {k: v for k, v in comparable(summary).items() if k != "timing_ms"}


def _untimed(step: dict) -> dict:
    """A model call without its times (start, latency, queue; the environment's turn)."""
    return {k: v for k, v in step.items() if k not in ("timing", "env")}


def stable(rows) -> list[dict]:
    return [
        {
            k: [_untimed(s) for s in v] if k == "trajectory" else v
            for k, v in r.items()
            if k not in VOLATILE
        }
        for r in rows
    ]


def hand_pass_at_k(rows: list[dict], k: int) -> float:
    per: dict[int, list[int]] = {}
    for r in rows:
        if r.get("reward") is not None:
            acc = per.setdefault(r["example_id"], [0, 0])
            acc[0] += 1
            acc[1] += r["reward"] >= 1.0
    vals = [1 - comb(n - c, k) / comb(n, k) for n, c in per.values() if n >= k]
    return sum(vals) / len(vals) if vals else math.nan


def hand_clustered_stderr(rows: list[dict]) -> float:
    """The standard error clustered by example (CR1): sqrt(G/(G-1) · Σ_g (S_g − n_g·mean)²) / N."""
    per: dict = {}
    for r in rows:
        if r.get("reward") is not None:
            acc = per.setdefault(r["example_id"], [0.0, 0])
            acc[0] += r["reward"]
            acc[1] += 1
    n = sum(c for _, c in per.values())
    mean = sum(s for s, _ in per.values()) / n
    g = len(per)
    return math.sqrt(g / (g - 1) * sum((s - c * mean) ** 2 for s, c in per.values())) / n


def assert_same_outputs(lazy: vf.GenerateOutputs, rows: list[dict]) -> None:
    """``lazy`` (rows on disk) against ``rows`` (in memory): row for row, summary, pass@k,
    DataFrame and training batch, each also checked against a hand computation."""
    assert lazy.lazy and isinstance(lazy.rows, DiskRows)
    memory = vf.GenerateOutputs(rows, dict(lazy.metadata))
    assert not memory.lazy
    assert len(lazy) == len(rows)
    assert list(lazy) == rows  # row for row, in order
    assert [lazy.rows[i] for i in (0, len(rows) // 2, -1)] == [
        rows[0],
        rows[len(rows) // 2],
        rows[-1],
    ]
    assert comparable(lazy.summary) == comparable(memory.summary)
    scored = [r["reward"] for r in rows if r.get("reward") is not None]
    assert lazy.summary["num_scored"] == len(scored)
    assert lazy.summary["reward_mean"] == pytest.approx(statistics.fmean(scored))
    assert lazy.summary["reward_stderr"] == pytest.approx(hand_clustered_stderr(rows))
    assert lazy.summary["num_errors"] == sum(1 for r in rows if r.get("error"))
    for k in range(1, PER_EXAMPLE + 1):
        assert lazy.pass_at_k(k) == memory.pass_at_k(k)
        assert lazy.pass_at_k(k) == pytest.approx(hand_pass_at_k(rows, k), nan_ok=True)
    expected = pd.DataFrame([flatten_row(r) for r in rows])
    pd.testing.assert_frame_equal(lazy.to_pandas(), expected)
    pd.testing.assert_frame_equal(memory.to_pandas(), expected)
    pd.testing.assert_frame_equal(
        lazy.to_pandas(columns=["example_id", "reward", "length"]),
        expected[["example_id", "reward", "length"]],
    )
    kept = [r for r in rows if r.get("reward") is not None and not r.get("error")]
    batch = lazy.to_training_batch()
    assert batch == memory.to_training_batch()
    assert batch["input_ids"] == [r["prompt_ids"] + r["completion_ids"] for r in kept]
    assert batch["advantages"] == [r["advantage"] for r in kept]
    assert comparable(lazy.by_task()["default"].summary) == comparable(memory.summary)
    assert_same_exports(lazy, memory, rows)


def assert_flat_rows(got: list[dict], rows: list[dict]) -> None:
    """Exported rows (nested values as JSON text) against the flat rows computed here."""
    expected = [flatten_row(r) for r in rows]
    columns = list(dict.fromkeys(c for r in expected for c in r))
    assert len(got) == len(expected) and all(list(g) == columns for g in got)
    for g, e in zip(got, expected, strict=True):
        for col in columns:
            want = e.get(col)
            assert g[col] == want or (isinstance(g[col], str) and json.loads(g[col]) == want), (
                col,
                g[col],
                want,
            )


def assert_same_exports(
    lazy: vf.GenerateOutputs, memory: vf.GenerateOutputs, rows: list[dict]
) -> None:
    """Parquet and the Hugging Face dataset, streamed in batches that split the run, equal the
    in-memory run's and the flat rows."""
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(export, "BATCH", 7)
        table = pq.read_table(lazy.to_parquet(Path(tmp) / "lazy.parquet"))
        assert table.equals(pq.read_table(memory.to_parquet(Path(tmp) / "memory.parquet")))
        assert_flat_rows(table.to_pylist(), rows)
        as_json = json.loads(json.dumps(lazy.metadata, default=str))
        assert json.loads(table.schema.metadata[b"verifiers_lite"]) == as_json
        ds = lazy.to_hf_dataset()
        assert ds.to_list() == table.to_pylist() == memory.to_hf_dataset().to_list()
        assert json.loads(ds.info.description) == as_json
        assert stable(vf.load_results(Path(tmp) / "lazy.parquet").rows) == stable(
            vf.load_results(Path(tmp) / "memory.parquet").rows
        )


def test_fresh_run_lazy_equals_in_memory(tmp_path: Path) -> None:
    lazy = run(tmp_path / "run")
    rows = reference(tmp_path / "run")
    assert len(rows) == N_EXAMPLES * PER_EXAMPLE
    assert any(r.get("error") for r in rows) and any(r.get("reward") == 1.0 for r in rows)
    assert_same_outputs(lazy, rows)
    # The same run without results_path holds its rows in memory; they agree but for ids and times.
    memory = run(None)
    assert not memory.lazy and isinstance(memory.rows, list)
    assert stable(lazy) == stable(memory.rows)
    assert separate_runs(lazy.summary) == separate_runs(memory.summary)
    assert lazy.to_training_batch() == memory.to_training_batch()
    assert vf.load_results(tmp_path / "run").rows == reference(tmp_path / "run")  # example order


def test_resumed_run_lazy_equals_in_memory(tmp_path: Path) -> None:
    path = tmp_path / "run"
    first = run(path, n=7)
    first_rows = list(first)
    lazy = run(path)  # resumes: keeps the 7 examples' good rows, reruns errors, adds the rest
    rows = reference(path, example_ids=set(range(N_EXAMPLES)))
    assert len(rows) == N_EXAMPLES * PER_EXAMPLE
    assert {r["attempts"] for r in rows if r["example_id"] == 4} == {2}  # errored: run again
    assert {r["attempts"] for r in rows if r["example_id"] != 4 and r["example_id"] < 7} == {1}
    assert_same_outputs(lazy, rows)
    resumed = {
        4,
        *range(7, N_EXAMPLES),
    }  # run by the second session: the errored example and the new ones
    assert stable(lazy) == [
        {
            **r,
            "attempts": 2 if r["example_id"] == 4 else 1,
            "session": 1 if r["example_id"] in resumed else 0,
        }
        for r in stable(run(None))
    ]
    with pytest.raises(
        StaleRowsError, match="replaced"
    ):  # the resume rewrote the file (errors dropped)
        list(first)
    assert len(first_rows) == 7 * PER_EXAMPLE


def test_rerun_of_smaller_run_keeps_other_examples_out_of_outputs(tmp_path: Path) -> None:
    path = tmp_path / "run"
    run(path)
    smaller = run(path, n=5, rerun_errors=False)
    assert len(read_rows(path / "results.jsonl")) == N_EXAMPLES * PER_EXAMPLE  # nothing thrown away
    assert_same_outputs(smaller, reference(path, example_ids=set(range(5))))


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def test_torn_writes_and_a_lagging_index_read_like_the_plain_reader(tmp_path: Path) -> None:
    path = tmp_path / "run"
    run(path)
    results, index = path / "results.jsonl", path / INDEX_FILE
    whole = index.read_bytes()
    # A crash while the last write's index records were written: one of three, then part of one.
    index.write_bytes(whole[: len(whole) - (PER_EXAMPLE - 1) * RECORD.itemsize + 7])
    # Then a torn group (2 of its 3 lines) and a torn last line.
    row = json.loads(results.read_bytes().splitlines()[0])
    torn = [
        json.dumps(
            {**row, "example_id": 99, "rollout_index": i, "_write_id": "w99", "_write_size": 3}
        )
        for i in range(2)
    ]
    _append(results, ("\n".join(torn) + "\n" + json.dumps({**row, "example_id": 98})[:40]).encode())
    loaded = vf.load_results(path)
    assert loaded.lazy
    assert list(loaded) == reference(path)  # example order, as a finished run returns them
    assert len(loaded) == N_EXAMPLES * PER_EXAMPLE
    index.unlink()  # no index at all: the rows are scanned
    assert list(vf.load_results(path)) == reference(path)  # example order without an index too
    index.write_bytes(b"\x01" * RECORD.itemsize * 3)  # an index of another file: not trusted
    assert list(vf.load_results(path)) == reference(path)
    # A rerun drops the torn lines, rewrites the file and its index, and reads the same.
    again = run(path, rerun_errors=False)
    assert_same_outputs(again, reference(path))
    assert len(index.read_bytes()) == N_EXAMPLES * PER_EXAMPLE * RECORD.itemsize


def test_lazy_outputs_hold_no_rows(tmp_path: Path) -> None:
    lazy = run(tmp_path / "run")
    disk = lazy.rows
    assert isinstance(disk, DiskRows)
    held = [v for v in vars(disk).values() if isinstance(v, (list, dict, tuple))]
    assert held == []  # positions only: two integer arrays
    assert disk._offsets.nbytes + disk._lengths.nbytes <= 16 * len(disk)
    assert lazy.rows[0] == lazy.rows[0] and lazy.rows[0] is not lazy.rows[0]  # read anew each time
    (tmp_path / "run" / "results.jsonl").rename(tmp_path / "moved.jsonl")
    assert len(lazy) == N_EXAMPLES * PER_EXAMPLE  # len reads nothing
    with pytest.raises(FileNotFoundError):
        next(iter(lazy))


def _live_rows() -> set[str]:
    """The trajectory ids of the rows alive now (by id, so rows of earlier tests freed meanwhile
    are not subtracted from this test's)."""
    gc.collect()
    return {
        o["trajectory_id"]
        for o in gc.get_objects()
        if type(o) is dict and "trajectory_id" in o and "reward" in o
    }


def test_a_run_with_results_path_keeps_no_rows_in_memory(tmp_path: Path) -> None:
    n = 60
    before = _live_rows()
    lazy = run(tmp_path / "run", n=n)
    assert len(lazy) == n * PER_EXAMPLE
    assert len(_live_rows() - before) <= PER_EXAMPLE  # at most the last group's, not the run's
    memory = run(None, n=n)
    assert (
        len(_live_rows() - before) >= n * PER_EXAMPLE
    )  # the same run without results_path holds them
    del memory


def test_dataframe_through_arrow_chunks_types_like_pandas(monkeypatch) -> None:
    """Chunked Arrow columns give the frame pandas builds from the flat rows: integers with a
    gap become floats, integers beside floats floats, booleans with a gap and mixed values
    objects, a metric first seen late is empty before."""
    from verifiers_lite.results import frame

    monkeypatch.setattr(frame, "CHUNK", 3)  # chunk boundaries inside these 11 rows
    rows = []
    for i in range(11):
        metrics = {"ints": i} if i != 4 else {}
        metrics["mixed_num"] = i if i < 6 else i + 0.5
        metrics["flag"] = (i % 2 == 0) if i != 7 else None
        metrics["kind"] = "a" if i < 8 else 3  # str, then int: objects
        if i >= 7:
            metrics["late"] = i / 2
        rows.append(
            {
                "example_id": i // 2,
                "rollout_index": i % 2,
                "reward": None if i == 5 else float(i % 3),
                "prompt": [{"role": "user", "content": f"q{i}"}],
                "completion": [],
                "metrics": metrics,
                "error": {"category": "env_error", "message": "x"} if i == 5 else None,
                "stop_reason": "stop",
            }
        )
    expected = pd.DataFrame([flatten_row(r) for r in rows])
    got = vf.GenerateOutputs(rows).to_pandas()
    pd.testing.assert_frame_equal(got, expected)
    assert (
        got["ints"].dtype == "float64"
        and got["mixed_num"].dtype == "float64"
        and got["flag"].dtype == object
    )
    pd.testing.assert_frame_equal(
        vf.GenerateOutputs(rows).to_pandas(columns=["late", "reward", "nothing"]),
        expected[["late", "reward"]].assign(nothing=None),
    )


def test_exports_stream_rows_on_disk(tmp_path: Path, monkeypatch) -> None:
    """to_parquet and to_hf_dataset hold one batch of rows, not the run: their Python memory
    peak is a fraction of what holding every row costs."""
    lazy = run(tmp_path / "run", n=200)
    monkeypatch.setattr(export, "BATCH", 20)

    def peak(action) -> int:
        gc.collect()
        tracemalloc.start()
        try:
            action()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    all_rows = peak(lambda: list(lazy))
    assert peak(lambda: lazy.to_parquet(tmp_path / "out.parquet")) < all_rows / 3
    assert peak(lazy.to_hf_dataset) < all_rows / 3
    assert pq.read_table(tmp_path / "out.parquet").num_rows == 200 * PER_EXAMPLE
