"""RowIndex against the store's own reader: torn writes, files replaced, late metrics, search."""

from __future__ import annotations

import json
import math
import random

import pytest

from tests.ui.viewer.helpers import make_row
from verifiers_lite.results.metrics import PassCriterion
from verifiers_lite.results.row_index import RowIndex
from verifiers_lite.results.store import ResultsStore, read_rows
from verifiers_lite.ui.viewer.query import RowFilter, run_stats, select


def keys(index: RowIndex) -> list[tuple]:
    return [(index.cols.example_id[i], index.cols.rollout_index[i]) for i in range(len(index))]


def disk_keys(path) -> list[tuple]:
    return [(r["example_id"], r["rollout_index"]) for r in read_rows(path)]


def test_partial_group_appears_only_when_whole(tmp_path):
    store = ResultsStore(tmp_path)
    store.open({})
    store.append_group([make_row(0, 0, 1.0), make_row(0, 1, 0.0)])
    whole = store._encode([make_row(1, 0, 1.0), make_row(1, 1, 1.0), make_row(1, 2, 0.0)])
    lines = [line.decode() for line in whole]
    with open(store.results_file, "a") as f:
        f.write(lines[0] + lines[1] + lines[2][:10])  # two lines of three, then a torn third
    index = RowIndex(store.results_file)
    index.scan()
    assert keys(index) == disk_keys(store.results_file) == [(0, 0), (0, 1)]
    with open(store.results_file, "a") as f:
        f.write(lines[2][10:])  # the writer finishes the group
    index.scan()
    assert keys(index) == disk_keys(store.results_file) == [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)]
    assert index.read([2, 4])[1]["completion"][0]["content"] == "a1.2"
    assert "_write_id" not in index.read([0])[0]


def test_replaced_file_is_indexed_again(tmp_path):
    store = ResultsStore(tmp_path)
    store.open({})
    for e in range(3):
        store.append_group([make_row(e, 0, float(e))])
    index = RowIndex(store.results_file)
    index.scan()
    generation = index.generation
    store.rewrite([make_row(7, 0, 1.0), make_row(8, 0, 0.0)])  # what a resumed run does
    index.scan()
    assert keys(index) == disk_keys(store.results_file) == [(7, 0), (8, 0)]
    assert index.generation != generation
    from verifiers_lite.results.row_index import StaleRowsError

    with pytest.raises(StaleRowsError):
        index.read([0], generation)


def test_late_metric_bad_lines_and_rows_without_write_ids(tmp_path):
    path = tmp_path / "results.jsonl"
    rows = [
        make_row(0, 0, 1.0),
        make_row(1, 0, None, error={"category": "env_error", "message": "x"}),
    ]
    rows[1]["metrics"] = {"m": 0.0, "late": 0.5}
    with open(path, "w") as f:
        f.write(json.dumps(rows[0]) + "\n")
        f.write("not json\n[1, 2]\n")
        f.write(json.dumps(rows[1]) + "\n")
    index = RowIndex(path)
    index.scan()
    assert keys(index) == disk_keys(path) == [(0, 0), (1, 0)]
    assert math.isnan(index.cols.metrics["late"][0]) and index.cols.metrics["late"][1] == 0.5
    assert math.isnan(index.cols.reward[1]) and index.error_name(1) == "env_error"
    stats = run_stats(index, PassCriterion())
    assert stats["num_scored"] == 1 and stats["errors"] == {"env_error": 1}


def test_fast_path_agrees_with_a_full_parse(tmp_path):
    """Rows whose text holds the key the fast path cuts at, nested 'reward' keys, odd key orders."""
    tricky = [
        make_row(0, 0, 1.0, answer='", "reward": 5, "x": {'),
        {**make_row('a"b', 1, 0.25), "info": {"reward": 9}},
        {"reward": 0.5, "example_id": 3, "rollout_index": 2, "metrics": {"reward": 1.0}},
        {**make_row(4, 0, 0.75), "metrics": {"reward": 0.1}},
    ]
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in tricky))
    index = RowIndex(path)
    index.scan()
    assert keys(index) == [(r["example_id"], r["rollout_index"]) for r in tricky]
    assert list(index.cols.reward) == [r["reward"] for r in tricky]
    assert index.cols.metrics["reward"][2] == 1.0 and index.cols.metrics["reward"][3] == 0.1


def test_search_and_filters_against_a_plain_python_filter(tmp_path):
    rng = random.Random(3)
    words = ["alpha", "Beta", 'say "hi"', "back\\slash", "naïve", "<tag>", "tab\there"]
    rows = []
    for e in range(60):
        text = " ".join(rng.sample(words, 2))
        row = make_row(e, 0, rng.choice([0.0, 0.5, 1.0]))
        row["completion"][0]["content"] = text
        rows.append(row)
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    index = RowIndex(path)
    index.scan()
    for q in ["alpha", "BETA", '"hi"', "back\\slash", "NAÏVE", "<tag>", "tab\there", "zzz"]:
        got = [index.cols.example_id[i] for i in select(index, RowFilter(q=q))]
        want = [
            r["example_id"]
            for r in rows
            if q.casefold() in r["completion"][0]["content"].casefold()
        ]
        assert got == want, q
    got = [
        index.cols.example_id[i] for i in select(index, RowFilter(min_reward=0.5, max_reward=0.5))
    ]
    assert got == [r["example_id"] for r in rows if r["reward"] == 0.5]


def test_first_rows_are_served_before_the_whole_file_is_indexed(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(
        "".join(json.dumps(make_row(e, 0, 1.0)) + "\n" for e in range(3 * RowIndex.CHUNK))
    )
    index = RowIndex(path)
    index.scan(min_rows=10)
    assert 10 <= len(index) < 3 * RowIndex.CHUNK and not index.at_eof
    index.scan()
    assert len(index) == 3 * RowIndex.CHUNK and index.at_eof


def test_a_time_budget_stops_indexing_early(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(
        "".join(json.dumps(make_row(e, 0, float(e % 2))) + "\n" for e in range(3 * RowIndex.CHUNK))
    )
    index = RowIndex(path)
    index.scan(budget_s=0.0)  # one step, then the budget is spent
    assert len(index) == RowIndex.CHUNK and not index.at_eof
    partial = run_stats(index, PassCriterion())
    assert partial["num_rollouts"] == RowIndex.CHUNK
    index.scan()
    assert run_stats(index, PassCriterion())["reward_mean"] == pytest.approx(0.5)
