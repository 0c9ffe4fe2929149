"""EnvGroup: concatenated datasets, per-task routing and scoring, per-task selection, resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter

import pytest

import verifiers_lite as vf
from tests.helpers.envs import boxed_correct, group, products_env, sums_env
from tests.helpers.paths import REPO
from tests.helpers.results_files import line_count
from verifiers_lite.results.store import read_rows
from verifiers_lite.testing.waiting import wait_until

T0 = {"temperature": 0}
# No per-rollout seed: the group renumbers examples, so a seed derived from the example id would
# differ from the member's own run; without one, answers depend on the messages alone.
SAME = {"sampling_args": T0, "seed": None, "progress": False}


def test_dataset_is_the_members_concatenated_with_task_and_unique_ids():
    g = group(6, 4)
    rows = g.get_eval_dataset()
    assert [r["example_id"] for r in rows] == list(range(10))
    assert [r["task"] for r in rows] == ["sums"] * 6 + ["products"] * 4
    # Each row keeps its own member's formatting (system prompt) and answer.
    members = sums_env(6).get_eval_dataset() + products_env(4).get_eval_dataset()
    assert [r["prompt"] for r in rows] == [m["prompt"] for m in members]
    assert [r["answer"] for r in rows] == [m["answer"] for m in members]
    assert rows[0]["prompt"][0] == {"role": "system", "content": "Add."}
    assert rows[6]["prompt"][0] == {"role": "system", "content": "Multiply."}


def test_each_rollout_is_run_and_scored_by_its_own_member(fake_server):
    client = vf.ChatClient(fake_server.base_url)
    out = group(6, 4).evaluate_sync(client, "fake-arith", rollouts_per_example=2, **SAME)
    alone = {
        "sums": sums_env(6).evaluate_sync(client, "fake-arith", rollouts_per_example=2, **SAME),
        "products": products_env(4).evaluate_sync(
            client, "fake-arith", rollouts_per_example=2, **SAME
        ),
    }
    parts = out.by_task()
    assert list(parts) == ["sums", "products"]
    for task, part in parts.items():
        ref = alone[task].rows
        assert [r["completion"] for r in part.rows] == [r["completion"] for r in ref]
        assert [r["reward"] for r in part.rows] == [r["reward"] for r in ref]
        own = [{k: v for k, v in r["metrics"].items() if k != "task_passed"} for r in part.rows]
        assert own == [r["metrics"] for r in ref]
        # Mixed pass criteria: each row also says whether it passes under its own task's.
        assert [r["metrics"]["task_passed"] for r in part.rows] == [
            float(alone[task].pass_criterion.passes(r)) for r in ref
        ]
    # products' off-by reward gives partial credit somewhere; sums' exact match never does.
    assert any(0 < r["reward"] < 1 for r in parts["products"].rows)
    assert all(r["reward"] in (0.0, 1.0) for r in parts["sums"].rows)
    # Per-task pass criteria survive the split (products passes at reward >= 0.9).
    assert parts["products"].pass_criterion == vf.PassCriterion("reward", 0.9)
    assert parts["sums"].pass_criterion == vf.PassCriterion("reward", 1.0)
    # The group's own pass@1 counts what each task calls solved.
    solved = sum(1 for r in out.rows if r["reward"] >= (0.9 if r["task"] == "products" else 1.0))
    assert out.pass_at_k(1) == pytest.approx(solved / len(out.rows))


def test_per_task_num_examples_and_interleaving(fake_server):
    g = group(6, 4)
    inputs = g.get_eval_inputs({"sums": 2, "products": 3}, rollouts_per_example=1)
    assert Counter(i["task"] for i in inputs) == {"sums": 2, "products": 3}
    assert [i["task"] for i in inputs][:4] == ["sums", "products", "sums", "products"]
    assert Counter(i["task"] for i in g.get_eval_inputs(3)) == {"sums": 3, "products": 3}
    only = g.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        num_examples={"products": -1},
        progress=False,
    )
    assert {r["task"] for r in only.rows} == {"products"} and len(only) == 4


def test_bad_task_names_fail_before_any_request(fake_server):
    g, client = group(), vf.ChatClient(fake_server.base_url)
    with pytest.raises(ValueError, match=r"unknown tasks \['nope'\]"):
        g.evaluate_sync(client, "fake-arith", num_examples={"nope": 1}, progress=False)
    with pytest.raises(
        ValueError, match=r"inputs row 1: field 'task' must be one of the group's tasks"
    ):
        g.generate_sync(
            [{"question": "What is 1 + 1?", "task": "sums"}, {"question": "x", "task": "other"}],
            client,
            "fake-arith",
            progress=False,
        )
    assert fake_server.stats()["requests"] == 0
    with pytest.raises(ValueError, match="names must be unique"):
        vf.EnvGroup([sums_env(), sums_env()])


def test_generate_on_raw_rows_uses_each_tasks_prompt(fake_server):
    out = group().generate_sync(
        [
            {"question": "What is 2 + 2?", "task": "sums", "answer": "4"},
            {"question": "What is 2 * 3?", "task": "products", "answer": "6"},
        ],
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        progress=False,
    )
    assert [r["prompt"][0]["content"] for r in out.rows] == ["Add.", "Multiply."]
    assert all(r["error"] is None for r in out.rows)


def test_resume_refuses_a_group_with_another_member_rubric(fake_server, tmp_path):
    client = vf.ChatClient(fake_server.base_url)
    group().evaluate_sync(
        client, "fake-arith", num_examples=2, results_path=str(tmp_path), progress=False
    )
    other = vf.EnvGroup(
        [
            sums_env(),
            vf.SingleTurnEnv(
                dataset=products_env().get_eval_dataset(),
                system_prompt="Multiply.",
                rubric=vf.Rubric([boxed_correct]),
            ),
        ],
        names=["sums", "products"],
    )
    with pytest.raises(vf.ResumeMismatchError, match="rubric: saved"):
        other.evaluate_sync(
            client, "fake-arith", num_examples=2, results_path=str(tmp_path), progress=False
        )


def test_group_resumed_after_sigkill_runs_only_what_is_missing(fake_server, tmp_path):
    fake_server.configure(latency_ms=50)
    results = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.envs.group_worker", fake_server.base_url, str(results)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(
            lambda: line_count(results / "results.jsonl") >= 9 or proc.poll() is not None,
            "nine rows saved",
            timeout=60,
            interval=0.005,
        )
    except AssertionError:
        proc.kill()  # leave nothing running behind a failed wait
        raise
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    on_disk = read_rows(results / "results.jsonl")
    assert 0 < len(on_disk) < 14 * 3, "the kill should land mid-run"
    assert all(
        c == 3 for c in Counter(r["example_id"] for r in on_disk).values()
    )  # whole groups only
    fake_server.reset()
    fake_server.configure(latency_ms=0)
    out = group(8, 6).evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=3,
        results_path=str(results),
        progress=False,
        sampling_args=T0,
    )
    assert fake_server.stats()["requests"] == 14 * 3 - len(on_disk)
    keys = sorted((r["example_id"], r["rollout_index"]) for r in out.rows)
    assert keys == [(e, i) for e in range(14) for i in range(3)]
    assert Counter(r["task"] for r in out.rows) == {"sums": 24, "products": 18}
    # Rows kept from before the kill are the saved ones, not reruns.
    saved_ids = {r["trajectory_id"] for r in on_disk}
    assert saved_ids <= {r["trajectory_id"] for r in out.rows}
    # Every row is scored by its own task's rubric: products rows carry boxed_off_by only.
    assert all(
        set(r["metrics"]) - {"task_passed"}
        == ({"boxed_off_by"} if r["task"] == "products" else {"boxed_correct"})
        for r in out.rows
    )
    assert json.loads((results / "metadata.json").read_text())["status"] == "completed"


def test_resume_refuses_a_group_whose_member_args_changed(fake_server, tmp_path):
    client = vf.ChatClient(fake_server.base_url)

    def grp(digits: int) -> vf.EnvGroup:
        return vf.EnvGroup(
            [vf.load_environment("arithmetic", num_examples=3, digits=digits), sums_env()]
        )

    grp(1).evaluate_sync(
        client, "fake-arith", num_examples=1, results_path=str(tmp_path), progress=False
    )
    with pytest.raises(vf.ResumeMismatchError, match="env_args: saved"):
        grp(2).evaluate_sync(
            client, "fake-arith", num_examples=1, results_path=str(tmp_path), progress=False
        )


def test_plots_split_by_task(fake_server):
    import matplotlib

    matplotlib.use("Agg")
    out = group(4, 4).evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-arith", rollouts_per_example=2, progress=False
    )
    ax = vf.plot_rewards(out, by="task")
    labels = " ".join(ax.get_legend_handles_labels()[1])
    assert "sums" in labels and "products" in labels


def test_a_group_with_an_adaptive_member_adapts():
    import verifiers_lite as vf

    rows = [{"question": "q", "answer": "a"}]

    def env(limit):
        return vf.SingleTurnEnv(dataset=rows, max_concurrent=limit)

    assert vf.EnvGroup([env(4), env("auto")], names=["a", "b"]).max_concurrent == "auto"
    assert vf.EnvGroup([env(None), env("auto")], names=["a", "b"]).max_concurrent is None
    assert vf.EnvGroup([env(4), env(16)], names=["a", "b"]).max_concurrent == 16
