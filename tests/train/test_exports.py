"""Trainer formats (verl, SkyRL, prime-rl, token files) from real token rows, and the validator
that checks them: every export passes; each planted fault is caught at its row and position."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import verifiers_lite as vf
from tests.helpers.tool_player import add, boxed_correct, tool_player
from verifiers_lite._util.sync import run_sync
from verifiers_lite.rollout import (
    IGNORE_INDEX,
    MultiTurnRollout,
    SamplingParams,
    TokenClient,
    training_view,
)
from verifiers_lite.rollout.testing import ScriptedSampler, toy_template
from verifiers_lite.train import (
    TrainingDataError,
    read_token_rows,
    to_prime_rl,
    to_skyrl,
    to_verl,
    validate_training_rows,
    write_token_rows,
)

respond = tool_player()


def tool_env() -> vf.ToolEnv:
    data = [{"question": f"What is {i} + 5?", "answer": str(i + 5)} for i in range(3)]
    return vf.ToolEnv(tools=[add], dataset=data, rubric=vf.Rubric([boxed_correct]), max_turns=4)


@pytest.fixture(scope="module")
def tool_rows() -> list[dict[str, Any]]:
    """Multi-turn tool rollouts through the token engine (scripted sampler, toy template)."""
    template = toy_template()
    client = TokenClient(
        ScriptedSampler(template, respond), template, SamplingParams(max_tokens=400, logprobs=0)
    )
    out = tool_env().evaluate_sync(client, "toy", rollouts_per_example=2, progress=False)
    assert all(r["turns"] == 2 and r["reward"] == 1.0 for r in out.rows)
    return out.rows


@pytest.fixture(scope="module")
def tool_state() -> dict[str, Any]:
    """One rollout's state, whose trajectory steps keep each turn's tokens."""
    template = toy_template()
    client = TokenClient(
        ScriptedSampler(template, respond), template, SamplingParams(max_tokens=400, logprobs=0)
    )
    env = tool_env()
    state = run_sync(env.rollout_state(env.get_dataset()[0], client, "toy"))
    assert len(state["trajectory"]) == 2 and all("tokens" in s for s in state["trajectory"])
    return dict(state)


def sampled_positions(row: dict[str, Any]) -> list[int]:
    """Completion positions of sampled tokens, from the per-row label layout (an independent path)."""
    labels = vf.rollout.build_training_batch([row])["labels"][0]
    n = len(row["prompt_ids"])
    return [i - n for i, lab in enumerate(labels) if lab != IGNORE_INDEX]


def test_verl_outputs_match_rows_and_pass(tool_rows: list[dict[str, Any]]) -> None:
    out = to_verl(tool_rows)
    assert validate_training_rows(out) == len(tool_rows)
    for row, rec in zip(tool_rows, out, strict=True):
        assert (
            rec["prompt_ids"] == row["prompt_ids"] and rec["response_ids"] == row["completion_ids"]
        )
        assert [i for i, m in enumerate(rec["response_mask"]) if m] == sampled_positions(row)
        assert rec["reward_score"] == 1.0
        assert rec["num_turns"] == 4  # user, assistant (tool call), tool, assistant
        assert 0 in rec["response_mask"]  # the tool answer is in the response, masked out


def test_skyrl_output_matches_rows_and_passes(tool_rows: list[dict[str, Any]]) -> None:
    out = to_skyrl(tool_rows)
    assert validate_training_rows(out) == len(tool_rows)
    assert out["rewards"] == [r["reward"] for r in tool_rows]
    assert out["response_ids"] == [r["completion_ids"] for r in tool_rows]
    assert [[i for i, m in enumerate(mask) if m] for mask in out["loss_masks"]] == [
        sampled_positions(r) for r in tool_rows
    ]
    assert out["stop_reasons"] == ["stop"] * len(tool_rows)
    assert [t["repetition_id"] for t in out["trajectory_ids"]] == [
        r["rollout_index"] for r in tool_rows
    ]


def test_prime_rl_samples_pass(tool_rows: list[dict[str, Any]]) -> None:
    out = to_prime_rl(tool_rows)
    assert validate_training_rows(out) == len(tool_rows)
    assert all(
        not any(s["prompt_mask"]) and len(s["prompt_mask"]) == len(s["prompt_ids"]) for s in out
    )
    assert [s["advantage"] for s in out] == [r["advantage"] for r in tool_rows]


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_token_files_round_trip(
    tool_rows: list[dict[str, Any]], tmp_path: Any, suffix: str
) -> None:
    back = read_token_rows(write_token_rows(tool_rows, tmp_path / f"rows{suffix}"))
    assert validate_training_rows(back) == len(tool_rows)
    for row, rec in zip(tool_rows, back, strict=True):
        for key in ("prompt_ids", "completion_ids", "completion_mask", "example_id", "reward"):
            assert rec[key] == row[key]
        assert rec["completion_logprobs"] == pytest.approx(row["completion_logprobs"], abs=1e-6)


def test_rows_states_and_trajectories_pass(
    tool_rows: list[dict[str, Any]], tool_state: dict[str, Any]
) -> None:
    template = toy_template()
    trajs = MultiTurnRollout(
        ScriptedSampler(template, lambda p: "ok"),
        template,
        sampling_params=SamplingParams(logprobs=0),
    )([[{"role": "user", "content": "q"}]])
    assert validate_training_rows([*tool_rows, tool_state, *trajs]) == len(tool_rows) + 2


def test_exports_reject_rows_without_tokens() -> None:
    row = {"example_id": 3, "rollout_index": 0, "reward": 1.0, "prompt": [], "completion": []}
    with pytest.raises(ValueError, match="example 3.*no token ids"):
        to_verl([row])


# -- one mutation per fault ---------------------------------------------------------------------


def only_issue(rows: Any) -> Any:
    with pytest.raises(TrainingDataError) as err:
        validate_training_rows(rows)
    assert len(err.value.issues) == 1, err.value.issues
    return err.value.issues[0]


def first_bridge(mask: list[int]) -> int:
    return mask.index(0)


def test_mask_of_wrong_length_is_caught(tool_rows: list[dict[str, Any]]) -> None:
    out = to_verl(tool_rows)
    out[2]["response_mask"] = out[2]["response_mask"][:-1]
    issue = only_issue(out)
    assert (issue.row, issue.kind, issue.position) == (
        2,
        "mask_length",
        len(out[2]["response_ids"]) - 1,
    )
    assert "row 2" in str(issue)


def test_shifted_logprobs_are_caught(tool_rows: list[dict[str, Any]]) -> None:
    out = to_verl(tool_rows)
    lps = out[1]["response_logprobs"]
    out[1]["response_logprobs"] = [0.0, *lps[:-1]]  # one position late, as an off-by-one would give
    issue = only_issue(out)
    assert (issue.row, issue.kind, issue.position) == (
        1,
        "logprob_alignment",
        first_bridge(out[1]["response_mask"]),
    )


def test_logprobs_of_wrong_count_are_caught(tool_rows: list[dict[str, Any]]) -> None:
    out = to_skyrl(tool_rows)
    out["rollout_logprobs"][3] = out["rollout_logprobs"][3][1:]
    issue = only_issue(out)
    assert (issue.row, issue.kind) == (3, "logprob_alignment")


def test_state_logprobs_differing_from_the_sampler_are_caught(tool_state: dict[str, Any]) -> None:
    state = copy.deepcopy(tool_state)
    state["completion_logprobs"] = [0.0 if m else 0.0 for m in state["completion_mask"]]
    state["completion_logprobs"][0] = -0.5  # not what the sampler returned for token 0
    issue = only_issue([state])
    assert (issue.row, issue.kind, issue.position) == (0, "logprob_alignment", 0)


def test_label_on_a_tool_token_is_caught(tool_state: dict[str, Any]) -> None:
    state = copy.deepcopy(tool_state)
    pos = first_bridge(state["completion_mask"])
    state["completion_mask"][pos] = 1  # the environment wrote this token
    issue = only_issue([state])
    assert (issue.row, issue.kind, issue.position) == (0, "label_on_unsampled", pos)


def test_label_on_a_prompt_token_is_caught(tool_rows: list[dict[str, Any]]) -> None:
    samples = to_prime_rl(tool_rows)
    samples[4]["prompt_mask"][7] = 1
    issue = only_issue(samples)
    assert (issue.row, issue.kind, issue.position) == (4, "label_on_unsampled", 7)
    template = toy_template()
    (traj,) = MultiTurnRollout(
        ScriptedSampler(template, lambda p: "ok"),
        template,
        sampling_params=SamplingParams(logprobs=0),
    )([[{"role": "user", "content": "q"}]])
    view = dict(training_view(traj), prompt_length=len(traj["prompt_ids"]))
    assert (
        validate_training_rows([traj, view]) == 2
    )  # the trajectory and its training view are clean
    stray = copy.deepcopy(view)
    stray["logprobs"][1] = -0.5  # a logprob on a prompt token
    issue = only_issue([stray])
    assert (issue.row, issue.kind, issue.position) == (0, "logprob_alignment", 1)
    view["labels"][2] = view["input_ids"][2]
    issue = only_issue([view])
    assert (issue.row, issue.kind, issue.position) == (0, "label_on_unsampled", 2)


def test_prefix_break_is_caught(tool_state: dict[str, Any]) -> None:
    state = copy.deepcopy(tool_state)
    second = state["trajectory"][1]["tokens"]
    first_len = len(state["trajectory"][0]["tokens"]["prompt_ids"])
    pos = (
        first_len + 3
    )  # inside turn 0's completion, as re-tokenising the model's text would change it
    second["prompt_ids"] = list(second["prompt_ids"])
    second["prompt_ids"][pos] += 1
    issue = only_issue([state])
    assert (issue.row, issue.kind, issue.position) == (0, "prefix_break", pos)
    assert "turn 1" in issue.where


@pytest.mark.local_model
def test_exports_of_embedded_model_rows_pass(llama_sampler: Any, llama_template: Any) -> None:
    env = vf.load_environment("arithmetic", num_examples=3)
    client = TokenClient(llama_sampler, llama_template, SamplingParams(max_tokens=24, logprobs=0))
    out = env.evaluate_sync(client, "smollm2", rollouts_per_example=2, progress=False)
    rows = [r for r in out.rows if r["reward"] is not None]
    assert rows
    for export in (to_verl(rows), to_skyrl(rows), to_prime_rl(rows)):
        assert validate_training_rows(export) == len(rows)
    shifted = to_skyrl(rows)
    shifted["loss_masks"][0] = shifted["loss_masks"][0] + [1]
    assert only_issue(shifted).kind == "mask_length"


def test_committed_training_notebook_ran_from_its_current_sources() -> None:
    import nbformat

    from tests.helpers.notebooks import notebook_script
    from tests.helpers.paths import NOTEBOOKS

    builder = notebook_script("build_train_notebook")
    nb = nbformat.read(NOTEBOOKS / builder.NAME, as_version=4)
    assert [(c.cell_type, c.source) for c in nb.cells] == [
        (c.cell_type, c.source) for c in builder.build().cells
    ], "run `.venv-vllm/bin/python notebooks/build_train_notebook.py --execute`"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)
    assert any("95% interval" in o.get("text", "") for o in outputs)
