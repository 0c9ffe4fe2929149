"""One summary, whoever reads it: for random row streams, the live display's figures at the end
of a run, the summary the run writes into ``metadata.json``, the summary of the run read back
from disk, ``vf-lite eval``'s table and the viewer's run statistics agree field by field, and
with figures computed here by hand (NaN rewards unscored, an error without a category
``unknown``, a row without a stop reason ``none``)."""

from __future__ import annotations

import math
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import verifiers_lite as vf
from verifiers_lite.cli.report import run_summary
from verifiers_lite.core.pass_criterion import PassCriterion
from verifiers_lite.core.progress import RunStats
from verifiers_lite.core.summary import RunSummary
from verifiers_lite.results.metrics import pass_at_k_from_counts
from verifiers_lite.results.row_index import RowIndex
from verifiers_lite.results.run_metadata import RunMetadata, add_summary, read_run_metadata
from verifiers_lite.results.store import ResultsStore
from verifiers_lite.ui.viewer.query import run_stats

NAN = float("nan")
SUMMARY_KEYS = (
    "num_rollouts",
    "num_scored",
    "num_errors",
    "reward_mean",
    "reward_stderr",
    "reward_ci",
    "reward_ci_undefined",
    "metrics_mean",
    "metrics_stderr",
    "metrics_ci",
    "metrics_ci_undefined",
    "errors",
    "stop_reasons",
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "timing_ms",
)

rewards = st.one_of(
    st.none(),
    st.just(NAN),
    st.sampled_from([0.0, 1.0, 0.5]),
    st.integers(0, 1),
    st.floats(-3, 3, allow_nan=False),
)
metric_values = st.one_of(st.none(), st.just(NAN), st.floats(0, 1, allow_nan=False))
errors = st.one_of(
    st.none(),
    st.none(),
    st.fixed_dictionaries({"category": st.sampled_from(["model_error", "env_error"])}),
    st.just({"message": "no category given"}),
    st.just({"category": None, "message": "a null category"}),
)
usages = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {"prompt_tokens": st.integers(0, 500), "completion_tokens": st.integers(0, 500)},
        optional={"reasoning_tokens": st.integers(0, 100)},
    ),
)
timings = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "generation_ms": st.floats(0, 1e4),
            "queue_ms": st.floats(0, 1e3),
            "rollout_ms": st.floats(0, 1e4),
            "total_ms": st.one_of(st.floats(0, 1e4), st.just(NAN)),
        },
    ),
)


@st.composite
def groups(draw: Any) -> list[list[dict[str, Any]]]:
    """Groups of rows of random examples (an example may come back: a rerun, independent
    scoring), in the key order a run writes."""
    out = []
    for _ in range(draw(st.integers(1, 6))):
        eid = draw(st.one_of(st.integers(0, 4), st.sampled_from(["a", "b"])))
        size = draw(st.integers(1, 4))
        group = []
        for idx in range(size):
            row: dict[str, Any] = {
                "example_id": eid,
                "rollout_index": idx,
                "prompt": [{"role": "user", "content": f"q{eid}"}],
                "completion": [{"role": "assistant", "content": "a"}],
                "reward": draw(rewards),
                "metrics": draw(
                    st.dictionaries(st.sampled_from(["acc", "fmt"]), metric_values, max_size=2)
                ),
                "stop_reason": draw(st.sampled_from(["stop", "length", "error", None])),
                "error": draw(errors),
            }
            if (usage := draw(usages)) is not None:
                row["usage"] = usage
            if (timing := draw(timings)) is not None:
                row["timing"] = timing
            group.append(row)
        out.append(group)
    return out


def _same(a: Any, b: Any, where: str) -> None:
    """Equal, floats to 1e-9 (sums taken in another order) and NaN equal to NaN; a tuple read
    back from JSON is a list."""
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, (int, float)) and isinstance(b, (int, float)), (where, a, b)
        if math.isnan(a) or math.isnan(b):
            assert math.isnan(a) and math.isnan(b), (where, a, b)
        else:
            assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9), (where, a, b)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (where, a, b)
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (where, a, b)
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    else:
        assert a == b, (where, a, b)


def _agree(expected: dict[str, Any], got: dict[str, Any], who: str) -> None:
    for key in SUMMARY_KEYS:
        _same(expected[key], got[key], f"{who}: {key}")


def _by_hand(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The plain figures, computed without the library."""
    scored = [
        float(r["reward"])
        for r in rows
        if r["reward"] is not None
        and not (isinstance(r["reward"], float) and math.isnan(r["reward"]))
    ]
    errs = Counter((r["error"].get("category") or "unknown") for r in rows if r["error"])
    usage = [r.get("usage") or {} for r in rows]
    return {
        "num_rollouts": len(rows),
        "num_scored": len(scored),
        "num_errors": sum(errs.values()),
        "reward_mean": sum(scored) / len(scored) if scored else NAN,
        "errors": dict(errs),
        "stop_reasons": dict(Counter(r["stop_reason"] or "none" for r in rows)),
        "prompt_tokens": sum(u.get("prompt_tokens", 0) for u in usage),
        "completion_tokens": sum(u.get("completion_tokens", 0) for u in usage),
        "reasoning_tokens": sum(u.get("reasoning_tokens", 0) for u in usage),
    }


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    stream=groups(),
    criterion=st.sampled_from(
        [PassCriterion(), PassCriterion("reward", 0.5), PassCriterion("acc")]
    ),
)
def test_live_final_disk_table_and_viewer_summaries_agree(
    stream: list[list[dict[str, Any]]], criterion: PassCriterion
) -> None:
    rows = [r for g in stream for r in g]
    live = RunStats(len(rows), RunSummary(criterion))
    with tempfile.TemporaryDirectory() as tmp:
        store = ResultsStore(Path(tmp) / "run", fsync=False)
        metadata = RunMetadata(pass_criterion=criterion.to_dict())
        store.open(metadata)
        for group in stream:  # as a run records them: written, then counted
            store.append_group(group)
            live.add(group)
        at_end = live.summary.summary()
        add_summary(metadata, at_end)
        store.write_metadata(metadata)
        store.close()

        by_hand = _by_hand(rows)
        for key, value in by_hand.items():
            _same(value, at_end[key], f"by hand: {key}")
        assert live.done == len(rows) and live.scored == by_hand["num_scored"]
        _same(live.mean_reward, by_hand["reward_mean"], "live mean")

        saved = read_run_metadata(Path(tmp) / "run")
        _agree(at_end, {k: saved[k] for k in SUMMARY_KEYS}, "metadata.json")  # type: ignore[literal-required]

        loaded = vf.load_results(Path(tmp) / "run")  # read back from disk, in example order
        _agree(at_end, loaded.summary, "load_results")
        _agree(at_end, run_summary(list(loaded.rows), 1, 1.0, criterion), "vf-lite eval table")

        index = RowIndex(Path(tmp) / "run" / "results.jsonl")
        index.scan()
        viewer = run_stats(index, criterion)
        _agree(at_end, viewer, "viewer")
        assert viewer["num_examples"] == len({str(r["example_id"]) for r in rows})
        counts = live.summary.pass_counts()
        for k, value in viewer["pass_at_k"].items():
            _same(pass_at_k_from_counts(counts, int(k)), value, f"viewer pass@{k}")
