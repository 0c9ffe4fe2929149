"""Resume reuses rows of the same run only: a changed argument, dataset, sampling, rubric or
model is refused naming what differs; errored rollouts are rerun (attempts counted)."""

from __future__ import annotations

import json
import socket

import pytest

import verifiers_lite as vf
from tests.helpers.envs import arithmetic_rows, boxed_correct, make_env
from verifiers_lite.results.store import read_rows


def _eval(env, client, path, model="fake-arith", **kw):
    kw.setdefault("rollouts_per_example", 2)
    return env.evaluate_sync(client, model, results_path=str(path), progress=False, **kw)


def test_other_env_args_are_refused_and_metadata_is_untouched(fake_server, tmp_path):
    c = vf.ChatClient(fake_server.base_url)
    _eval(vf.load_environment("arithmetic", num_examples=4, seed=0), c, tmp_path, num_examples=4)
    saved = (tmp_path / "metadata.json").read_text()
    before = fake_server.stats()["requests"]
    with pytest.raises(vf.ResumeMismatchError) as info:
        _eval(
            vf.load_environment("arithmetic", num_examples=4, seed=1), c, tmp_path, num_examples=4
        )
    msg = str(info.value)
    assert "env_args: saved" in msg and "'seed': 0" in msg and "'seed': 1" in msg
    assert "another results_path" in msg
    assert fake_server.stats()["requests"] == before
    assert (tmp_path / "metadata.json").read_text() == saved


def test_another_dataset_under_the_same_env_id_is_refused(fake_server, tmp_path):
    c = vf.ChatClient(fake_server.base_url)
    _eval(make_env(4), c, tmp_path)
    other = vf.SingleTurnEnv(
        dataset=[{"question": f"What is {i} * 3?", "answer": str(3 * i)} for i in range(4)],
        rubric=vf.Rubric([boxed_correct]),
    )
    with pytest.raises(
        vf.ResumeMismatchError, match=r"other inputs for 4 of 4 examples \(first: example_id 0"
    ):
        _eval(other, c, tmp_path)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"sampling_args": {"temperature": 0.0}}, "sampling_args"),
        ({"independent_scoring": True}, "independent_scoring"),
        ({"score_rollouts": False}, "score_rollouts"),
    ],
)
def test_other_sampling_or_scoring_is_refused(fake_server, tmp_path, kwargs, field):
    c = vf.ChatClient(fake_server.base_url)
    _eval(make_env(3), c, tmp_path)
    with pytest.raises(vf.ResumeMismatchError, match=rf"\n  {field}: saved"):
        _eval(make_env(3), c, tmp_path, **kwargs)


def test_another_rubric_is_refused(fake_server, tmp_path):
    c = vf.ChatClient(fake_server.base_url)
    _eval(make_env(3), c, tmp_path)
    env = vf.SingleTurnEnv(
        dataset=arithmetic_rows(3), rubric=vf.Rubric([boxed_correct], weights=[2.0])
    )
    with pytest.raises(
        vf.ResumeMismatchError,
        match=r"rubric: saved \[\['boxed_correct', 'boxed_correct', 1.0\]\], "
        r"now \[\['boxed_correct', 'boxed_correct', 2.0\]\]",
    ):
        _eval(env, c, tmp_path)


def test_fewer_examples_with_identical_inputs_reuse_rows(fake_server, tmp_path):
    c = vf.ChatClient(fake_server.base_url)
    first = _eval(make_env(6), c, tmp_path)
    before = fake_server.stats()["requests"]
    again = _eval(make_env(6), c, tmp_path, num_examples=3)
    assert fake_server.stats()["requests"] == before
    assert [r["trajectory_id"] for r in again.rows] == [r["trajectory_id"] for r in first.rows[:6]]


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there once the socket is closed


def test_errored_rollouts_are_rerun_by_default_with_attempts_counted(fake_server, tmp_path):
    env = make_env(3)
    dead = vf.ChatClient(_dead_url(), retry=vf.RetryPolicy(max_attempts=1))
    out = _eval(env, dead, tmp_path)
    assert {r["error"]["category"] for r in out.rows} == {"model_connection"}
    assert json.loads((tmp_path / "metadata.json").read_text())["status"] == "completed_with_errors"
    fake_server.reset()
    live = vf.ChatClient(
        fake_server.base_url
    )  # another endpoint than the run's: said so explicitly
    kept = _eval(env, live, tmp_path, rerun_errors=False, allow_client_change=True)
    assert fake_server.stats()["requests"] == 0 and all(r["error"] for r in kept.rows)
    again = _eval(env, live, tmp_path, allow_client_change=True)
    assert fake_server.stats()["requests"] == 6
    assert not any(r.get("error") for r in again.rows)
    assert [r["attempts"] for r in again.rows] == [2] * 6
    assert json.loads((tmp_path / "metadata.json").read_text())["status"] == "completed"
    assert [r["attempts"] for r in read_rows(tmp_path / "results.jsonl")] == [2] * 6


def test_one_errored_rollout_reruns_its_whole_group(fake_server, tmp_path):
    env, c = make_env(3), vf.ChatClient(fake_server.base_url, retry=vf.RetryPolicy(max_attempts=1))
    _eval(env, c, tmp_path, max_concurrent=1)
    rows = read_rows(tmp_path / "results.jsonl")
    rows[3]["error"] = {
        "category": "model_http_error",
        "message": "HTTP 500",
    }  # example 1, one rollout
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    fake_server.reset()
    out = _eval(env, c, tmp_path)
    assert fake_server.stats()["requests"] == 2  # both rollouts of example 1
    assert [r["attempts"] for r in out.rows] == [1, 1, 2, 2, 1, 1]
    group = [r for r in out.rows if r["example_id"] == 1]
    assert abs(sum(r["advantage"] for r in group)) < 1e-9


def test_group_reward_with_independent_scoring_is_refused_before_any_request(fake_server):
    @vf.group_reward
    def rank(completion, **_):
        return [1.0] * len(completion)

    env = vf.SingleTurnEnv(dataset=arithmetic_rows(2), rubric=vf.Rubric([rank]))
    assert env.requires_group_rollouts
    with pytest.raises(ValueError, match=r"independent_scoring=True cannot be used .* \['rank'\]"):
        env.evaluate_sync(
            vf.ChatClient(fake_server.base_url),
            "fake-arith",
            rollouts_per_example=2,
            independent_scoring=True,
            progress=False,
        )
    assert fake_server.stats()["requests"] == 0


def test_score_rollouts_false_leaves_rows_unscored_and_never_calls_the_rubric(fake_server):
    calls = []

    def reward(completion, **_):
        calls.append(1)
        return 1.0

    env = vf.SingleTurnEnv(dataset=arithmetic_rows(3), rubric=vf.Rubric([reward]))
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=2,
        score_rollouts=False,
        progress=False,
    )
    assert len(out.rows) == 6 and not calls
    assert all(r["reward"] is None and r["advantage"] is None for r in out.rows)
    assert all(r["completion"] for r in out.rows)
    env_off = vf.SingleTurnEnv(
        dataset=arithmetic_rows(2), rubric=vf.Rubric([reward]), score_rollouts=False
    )
    out = env_off.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-arith", progress=False)
    assert not calls and all(r["reward"] is None for r in out.rows)
