"""A run's per-rollout limits are part of what the run is: recorded in its metadata (the run's
over the environment's, field by field), checked on resume (a different limit would end rollouts
elsewhere, so saved rows would not be this run's), and refused before any request where the
rollouts run out of this process and would not see them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import verifiers_lite as vf
from verifiers_lite.core.errors import ResumeMismatchError

ROWS = [{"question": f"{i} + 1", "answer": str(i + 1)} for i in range(3)]


def _env(**kwargs) -> vf.SingleTurnEnv:
    return vf.SingleTurnEnv(
        dataset=ROWS,
        rubric=vf.Rubric([lambda completion, answer: float(answer in completion[-1]["content"])]),
        **kwargs,
    )


def _run(path: Path, env: vf.SingleTurnEnv, **options) -> vf.GenerateOutputs:
    return env.evaluate_sync(
        vf.ScriptedClient(lambda m: "2"), "echo", results_path=path, progress=False, **options
    )


def _metadata(path: Path) -> dict:
    return json.loads((path / "metadata.json").read_text())


def test_the_run_records_its_limits_the_runs_over_the_environments(tmp_path: Path) -> None:
    env = _env(limits=vf.Limits(turns=4, time_s=30.0))
    _run(tmp_path / "run", env, limits=vf.Limits(turns=2, total_tokens=500))
    meta = _metadata(tmp_path / "run")
    expected = {"turns": 2, "time_s": 30.0, "total_tokens": 500}
    assert meta["limits"] == expected
    assert meta["fingerprint"]["limits"] == expected


def test_a_run_without_limits_records_none(tmp_path: Path) -> None:
    _run(tmp_path / "run", _env())
    meta = _metadata(tmp_path / "run")
    assert "limits" not in meta and "limits" not in meta["fingerprint"]


@pytest.mark.parametrize(
    ("first", "then"),
    [
        (vf.Limits(turns=2), vf.Limits(turns=3)),  # changed
        (vf.Limits(turns=2), None),  # dropped
        (None, vf.Limits(total_tokens=100)),  # added
    ],
    ids=["changed", "dropped", "added"],
)
def test_a_resume_with_other_limits_is_refused_naming_them(
    tmp_path: Path, first: vf.Limits | None, then: vf.Limits | None
) -> None:
    path = tmp_path / "run"
    _run(path, _env(), limits=first)
    before = (path / "results.jsonl").read_bytes()
    with pytest.raises(ResumeMismatchError, match="limits"):
        _run(path, _env(), limits=then)
    assert (path / "results.jsonl").read_bytes() == before


def test_a_resume_with_the_same_limits_reuses_the_rows(tmp_path: Path) -> None:
    path = tmp_path / "run"
    first = _run(path, _env(), limits=vf.Limits(turns=2))
    again = _run(path, _env(), limits=vf.Limits(turns=2))
    assert [r["trajectory_id"] for r in again.rows] == [r["trajectory_id"] for r in first.rows]


def test_run_limits_with_rollouts_run_elsewhere_are_refused_before_any_request() -> None:
    # A rollout server's rollouts do not see this process's run limits; nothing listens on the
    # URL, so any attempt to reach it would fail with another error than the refusal.
    from verifiers_lite.executors.remote import RemoteExecutor

    calls: list[object] = []
    client = vf.ScriptedClient(lambda m: calls.append(m) or "2")
    with pytest.raises(ValueError, match="in-process executor"):
        _env().evaluate_sync(
            client,
            "echo",
            limits=vf.Limits(turns=2),
            executor=RemoteExecutor("http://127.0.0.1:9"),
            progress=False,
        )
    assert calls == []
