"""vf.compare: one flat row per run, figures computed independently here."""

from __future__ import annotations

import math

import pytest

import verifiers_lite as vf


def _run(
    model: str, rewards: list[float | None], stops: list[str], temperature: float = 0.7
) -> vf.GenerateOutputs:
    rows = []
    for i, (r, stop) in enumerate(zip(rewards, stops, strict=True)):
        rows.append(
            {
                "example_id": i // 2,
                "rollout_index": i % 2,
                "reward": r,
                "stop_reason": stop,
                "metrics": {} if r is None else {"correct": r},
                "error": {"category": "model_timeout", "message": "x"} if r is None else None,
                "usage": {"completion_tokens": 10},
            }
        )
    return vf.GenerateOutputs(
        rows=rows,
        metadata={
            "env_id": "arith",
            "model": model,
            "rollouts_per_example": 2,
            "sampling_args": {"temperature": temperature},
            "start_time": 100.0,
            "end_time": 104.0,
        },
    )


def test_one_flat_row_per_run_with_independent_figures():
    a = _run("small", [1.0, 0.0, 1.0, 1.0], ["stop", "length", "stop", "stop"])
    b = _run("big", [1.0, 1.0, None, 0.0], ["stop", "stop", "error", "length"])
    df = vf.compare([a, b], details=True)
    assert list(df["run"]) == ["small", "big"]  # named by what differs
    assert not any(isinstance(v, dict) for v in df.to_numpy().ravel())  # flat: no dict cells
    ra, rb = df.iloc[0], df.iloc[1]
    assert ra["reward_mean"] == pytest.approx(0.75)
    # Clustered by example: example means 0.5 and 1.0 (sd 0.354) over 2 examples.
    assert ra["reward_stderr"] == pytest.approx(math.sqrt(0.125) / math.sqrt(2))
    half = 12.706 * ra["reward_stderr"]  # t(0.975; 1 df)
    assert (ra["reward_ci_low"], ra["reward_ci_high"]) == pytest.approx(
        (0.75 - half, 0.75 + half), abs=1e-3
    )
    assert rb["scored"] == 3 and rb["reward_mean"] == pytest.approx(2 / 3)
    assert ra["metric:correct"] == pytest.approx(0.75)
    # pass@1 = mean over examples of c/n; pass@2 = share of examples with a pass (n=2)
    assert ra["pass@1"] == pytest.approx((0.5 + 1.0) / 2) and ra["pass@2"] == pytest.approx(1.0)
    assert (ra["errors"], rb["errors"], rb["error:model_timeout"], ra["error:model_timeout"]) == (
        0,
        1,
        1,
        0,
    )
    assert (ra["stop:length"], ra["stop:stop"], rb["stop:error"], ra["stop:error"]) == (1, 3, 1, 0)
    assert ra["completion_tokens_per_rollout"] == 10 and ra["wall_time_s"] == 4.0


def test_names_from_a_dict_and_runs_from_disk(tmp_path):
    a = _run("m", [1.0, 0.0], ["stop", "stop"], temperature=0.2)
    b = _run("m", [1.0, 1.0], ["stop", "stop"], temperature=1.0)
    path = b.save(tmp_path / "b")
    df = vf.compare({"cold": a, "hot": str(path)})
    assert list(df["run"]) == ["cold", "hot"] and list(df["reward_mean"]) == [0.5, 1.0]
    assert list(vf.compare([a, b])["run"]) == ["temperature=0.2", "temperature=1.0"]


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="at least one"):
        vf.compare([])
    with pytest.raises(TypeError, match="GenerateOutputs"):
        vf.compare([42])


def test_the_default_view_is_compact_and_details_are_on_request():
    a = _run("small", [1.0, 0.0, 1.0, 1.0], ["stop", "length", "stop", "stop"])
    b = _run("big", [1.0, 1.0, None, 0.0], ["stop", "stop", "error", "length"])
    compact, full = vf.compare([a, b]), vf.compare([a, b], details=True)
    assert list(compact.columns) == [
        "run",
        "rollouts",
        "reward_mean",
        "reward_stderr",
        "reward_ci_low",
        "reward_ci_high",
        "pass@1",
        "pass@2",
        "errors",
        "cost_per_reward",  # USD per unit of reward; None: unpriced
    ]
    assert (
        len(full.columns) > 15
    )  # everything else: env, model, metrics, every error and stop kind...
    assert compact.equals(full[compact.columns])  # the same figures, fewer columns
    assert list(vf.compare([a, b], ks=[1]))[-3:] == ["pass@1", "errors", "cost_per_reward"]
