"""Re-scoring saved rollouts: the new rubric's rewards with no model request, group advantages
recomputed, errored rollouts untouched, a new run directory that resumes under the new rubric,
and a State rebuilt faithfully enough that the same rubric gives the same scores (multi-turn and
tool runs included)."""

from __future__ import annotations

import json
import re

import pytest

import verifiers_lite as vf
from tests.helpers.envs import arithmetic_rows, boxed_correct
from verifiers_lite.results.store import ResultsStore, read_rows

_BOXED = re.compile(r"\\boxed\{(-?\d+)\}")


def _stated(row) -> int | None:
    """The number the fake model boxed, read from the saved text (independently of the library)."""
    m = _BOXED.search(row["completion"][-1]["content"] or "")
    return int(m.group(1)) if m else None


def off_by(completion, answer) -> float:
    """A new reward: 1 / (1 + |stated - answer|)."""
    m = _BOXED.search(completion[-1]["content"] or "")
    return 1.0 / (1.0 + abs(int(m.group(1)) - int(answer))) if m else 0.0


def _eval(env, server, path=None, **kw):
    kw.setdefault("rollouts_per_example", 3)
    return env.evaluate_sync(
        vf.ChatClient(server.base_url, retry=vf.RetryPolicy(max_attempts=1)),
        "fake-arith",
        results_path=str(path) if path else None,
        progress=False,
        **kw,
    )


def test_rescore_applies_the_new_function_with_no_request(fake_server, tmp_path):
    run = tmp_path / "run"
    first = _eval(
        vf.SingleTurnEnv(dataset=arithmetic_rows(5), rubric=vf.Rubric([boxed_correct])),
        fake_server,
        run,
    )
    requests = fake_server.stats()["requests"]
    out = vf.rescore(run, vf.Rubric([off_by], weights=[2.0]))
    assert fake_server.stats()["requests"] == requests
    target = tmp_path / "run-rescored"
    assert out.metadata["results_path"] == str(target) and out.metadata["rescored_from"][
        "path"
    ] == str(run)
    saved = sorted(
        read_rows(target / "results.jsonl"), key=lambda r: (r["example_id"], r["rollout_index"])
    )
    assert [r["trajectory_id"] for r in saved] == [r["trajectory_id"] for r in first.rows]
    for row, old in zip(saved, first.rows, strict=True):
        expected = 2.0 / (1 + abs(_stated(old) - int(old["answer"])))
        assert row["reward"] == pytest.approx(expected)
        assert row["metrics"] == {"off_by": pytest.approx(expected / 2)}  # the old metric is gone
        assert row["completion"] == old["completion"] and row["attempts"] == old["attempts"]
    for eid in {r["example_id"] for r in saved}:
        group = [r for r in saved if r["example_id"] == eid]
        mean = sum(r["reward"] for r in group) / len(group)
        assert [r["advantage"] for r in group] == pytest.approx([r["reward"] - mean for r in group])
    meta = json.loads((target / "metadata.json").read_text())
    assert meta["reward_mean"] == pytest.approx(sum(r["reward"] for r in saved) / len(saved))
    # The original run is untouched, and the new directory resumes under the new rubric.
    assert sorted(
        read_rows(run / "results.jsonl"), key=lambda r: (r["example_id"], r["rollout_index"])
    ) == list(first.rows)
    env = vf.SingleTurnEnv(dataset=arithmetic_rows(5), rubric=vf.Rubric([off_by], weights=[2.0]))
    again = _eval(env, fake_server, target)
    assert fake_server.stats()["requests"] == requests
    assert [r["reward"] for r in again.rows] == [r["reward"] for r in saved]


def test_errored_rollouts_stay_unscored_and_a_rubric_error_is_scored_again(fake_server, tmp_path):
    def fragile(completion, example_id) -> float:
        if example_id == 2:
            raise RuntimeError("bug in the reward")
        return 1.0

    fake_server.configure(faults=[{"status": 500, "message": "boom"}])  # the first request fails
    first = _eval(
        vf.SingleTurnEnv(dataset=arithmetic_rows(3), rubric=vf.Rubric([fragile])),
        fake_server,
        max_concurrent=1,
    )
    http_failed = [
        r for r in first.rows if (r["error"] or {}).get("category") == "model_http_error"
    ]
    rubric_failed = [r for r in first.rows if (r["error"] or {}).get("category") == "rubric_error"]
    assert len(http_failed) == 1 and len(rubric_failed) == 3
    requests = fake_server.stats()["requests"]
    out = first.rescore(vf.Rubric([off_by]))
    assert fake_server.stats()["requests"] == requests and "results_path" not in out.metadata
    by_id = {r["trajectory_id"]: r for r in out.rows}
    failed = by_id[http_failed[0]["trajectory_id"]]
    assert (
        failed["error"] == http_failed[0]["error"]
        and failed["reward"] is None
        and failed["advantage"] is None
    )
    for old in first.rows:
        new = by_id[old["trajectory_id"]]
        if new is failed:
            continue
        assert new["error"] is None and new["reward"] == pytest.approx(
            1 / (1 + abs(_stated(old) - int(old["answer"])))
        )
    group = [r for r in out.rows if r["example_id"] == failed["example_id"] and r is not failed]
    mean = sum(r["reward"] for r in group) / len(group)  # over the scored rollouts only
    assert [r["advantage"] for r in group] == pytest.approx([r["reward"] - mean for r in group])
    assert out.metadata["status"] == "completed_with_errors" and out.metadata["num_errors"] == 1


def test_group_rewards_are_recomputed_per_example(fake_server):
    first = _eval(
        vf.SingleTurnEnv(dataset=arithmetic_rows(4), rubric=vf.Rubric([boxed_correct])),
        fake_server,
        rollouts_per_example=4,
    )

    @vf.group_reward
    def share_right(completion, answer):
        right = [
            1.0
            if _BOXED.search(c[-1]["content"] or "")
            and _BOXED.search(c[-1]["content"]).group(1) == a
            else 0.0
            for c, a in zip(completion, answer, strict=True)
        ]
        return [sum(right) / len(right)] * len(right)

    out = vf.rescore(first, vf.Rubric([share_right]))
    for eid in range(4):
        old = [r for r in first.rows if r["example_id"] == eid]
        share = sum(_stated(r) == int(r["answer"]) for r in old) / 4
        assert [r["reward"] for r in out.rows if r["example_id"] == eid] == pytest.approx(
            [share] * 4
        )
        assert [r["advantage"] for r in out.rows if r["example_id"] == eid] == pytest.approx(
            [0.0] * 4
        )


def test_an_existing_target_is_refused_unless_overwritten(fake_server, tmp_path):
    run = tmp_path / "run"
    _eval(
        vf.SingleTurnEnv(dataset=arithmetic_rows(2), rubric=vf.Rubric([boxed_correct])),
        fake_server,
        run,
    )
    vf.rescore(run, vf.Rubric([off_by]))
    with pytest.raises(FileExistsError, match="already holds a run"):
        vf.rescore(run, vf.Rubric([lambda completion: 0.25]))
    out = vf.rescore(run, vf.Rubric([lambda completion: 0.25]), overwrite=True)
    assert {r["reward"] for r in read_rows(tmp_path / "run-rescored" / "results.jsonl")} == {0.25}
    assert out.metadata["rescored_from"]["path"] == str(run)
    with pytest.raises(ValueError, match="is the run being re-scored"):
        vf.rescore(run, vf.Rubric([off_by]), results_path=run)


class _Hints(vf.MultiTurnEnv):
    """Guess the number; the environment counts its hints on the State (a key of its own)."""

    async def env_response(self, messages, state):
        state["hints"] = state.get("hints", 0) + 1
        guess = int(re.findall(r"-?\d+", messages[-1]["content"] or "0")[-1])
        target = int(state["answer"])
        if guess == target:
            state["done"] = True
            return [{"role": "user", "content": "correct"}]
        return [{"role": "user", "content": "higher" if guess < target else "lower"}]


def _what_it_saw(state, completion) -> float:
    """A reward that encodes what scoring saw of the State: turns, finish reasons, tools, keys."""
    finish = "".join((step["finish_reason"] or "?")[0] for step in state["trajectory"])
    replies = [m for m in completion if m["role"] == "assistant"]
    assert [step["message"] for step in state["trajectory"]] == replies
    tools = len(state.get("tool_defs") or [])
    return float(
        len(state["trajectory"]) * 1000
        + state.get("hints", 0) * 100
        + tools * 10
        + len(finish)
        + (0.5 if state.get("done") else 0.0)
        + state["turns"] * 1e-3
    )


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression.

    Args:
        expression: like 3 + 4
    """
    a, op, b = re.match(r"\s*(-?\d+)\s*([+\-*])\s*(-?\d+)", expression).groups()
    return str(int(a) + int(b) if op == "+" else int(a) - int(b) if op == "-" else int(a) * int(b))


def test_multi_turn_and_tool_runs_rescore_to_the_same_scores(fake_server):
    client = vf.ChatClient(fake_server.base_url)
    guess_rows = [
        {"question": "Guess a number between 1 and 50.", "answer": str(n)} for n in (7, 33, 48)
    ]
    guess = _Hints(dataset=guess_rows, rubric=vf.Rubric([_what_it_saw]), max_turns=8)
    calc = vf.ToolEnv(
        tools=[calculator], dataset=arithmetic_rows(3), rubric=vf.Rubric([_what_it_saw])
    )
    for env, model in ((guess, "fake-guess"), (calc, "fake-tool")):
        first = env.evaluate_sync(client, model, rollouts_per_example=2, progress=False)
        assert all(r["error"] is None and r["turns"] >= 2 for r in first.rows), first.rows[0]
        if env is guess:  # the environment's own keys were seen by the first scoring
            assert all(
                r["env_state"]["hints"] >= 1 and int(r["reward"]) // 100 % 10 >= 1
                for r in first.rows
            )
        else:
            assert all(int(r["reward"]) // 10 % 10 == 1 for r in first.rows)  # one tool offered
        requests = fake_server.stats()["requests"]
        again = vf.rescore(first, env)  # the environment's rubric, and its tools for tool_defs
        assert fake_server.stats()["requests"] == requests
        assert [r["reward"] for r in again.rows] == [r["reward"] for r in first.rows]
        assert [r["advantage"] for r in again.rows] == pytest.approx(
            [r["advantage"] for r in first.rows]
        )


def test_groups_are_whole_whatever_the_order_of_rows_on_disk(fake_server, tmp_path):
    """A run's file may hold an example's rollouts apart (resumed and rerun groups): each group
    is still scored whole, so a group reward sees all its rollouts."""
    run = tmp_path / "run"
    _eval(
        vf.SingleTurnEnv(dataset=arithmetic_rows(4), rubric=vf.Rubric([boxed_correct])),
        fake_server,
        run,
        rollouts_per_example=3,
    )
    rows = read_rows(run / "results.jsonl")
    interleaved = sorted(rows, key=lambda r: (r["rollout_index"], -r["example_id"]))
    ResultsStore(run).rewrite(interleaved)  # every row its own write, no two of an example adjacent

    @vf.group_reward
    def rank_in_group(completion, example_id):
        assert len(completion) == 3 and len(set(example_id)) == 1
        return [float(i) for i in range(3)]

    out = vf.rescore(run, vf.Rubric([rank_in_group]), results_path=tmp_path / "ranked")
    assert sorted(r["reward"] for r in out.rows) == [0.0] * 4 + [1.0] * 4 + [2.0] * 4
    for eid in range(4):
        group = [r for r in out.rows if r["example_id"] == eid]
        assert sorted(r["advantage"] for r in group) == pytest.approx([-1.0, 0.0, 1.0])


def test_an_environment_group_rescores_each_task_with_its_own_rubric_and_resumes(
    fake_server, tmp_path
):
    def half(completion, answer) -> float:
        return 0.5 * boxed_correct(completion, answer)

    def group(first_reward, second_reward):
        a = vf.SingleTurnEnv(dataset=arithmetic_rows(2), rubric=vf.Rubric([first_reward]))
        b = vf.SingleTurnEnv(dataset=arithmetic_rows(3), rubric=vf.Rubric([second_reward]))
        return vf.EnvGroup([a, b], names=["a", "b"])

    run = tmp_path / "run"
    first = _eval(group(boxed_correct, boxed_correct), fake_server, run, rollouts_per_example=2)
    requests = fake_server.stats()["requests"]
    fixed = group(boxed_correct, half)
    with pytest.raises(
        vf.ResumeMismatchError, match=r"(?s)rubric: saved .*'half'.*vf\.rescore\("
    ) as info:
        _eval(fixed, fake_server, run, rollouts_per_example=2)
    assert "vf-lite rescore" not in str(
        info.value
    )  # a group built by hand: the command line cannot rebuild it
    out = vf.rescore(run, fixed)
    by_id = {r["trajectory_id"]: r for r in out.rows}
    for old in first.rows:
        factor = 0.5 if old["task"] == "b" else 1.0
        assert by_id[old["trajectory_id"]]["reward"] == factor * old["reward"]
    again = _eval(fixed, fake_server, out.metadata["results_path"], rollouts_per_example=2)
    assert fake_server.stats()["requests"] == requests and len(again.rows) == len(first.rows)
