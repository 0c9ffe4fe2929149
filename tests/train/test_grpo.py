"""TRL's GRPOTrainer on the library's rollouts: a few real GRPO steps on the SmolLM2 checkpoint,
and what TRL receives (ids, loss masks, sampler logprobs) compared with the rows item by item,
a multi-turn tool rollout included."""

from __future__ import annotations

import copy
from typing import Any

import pytest

pytestmark = pytest.mark.train

torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")

import verifiers_lite as vf  # noqa: E402
from tests.helpers.tool_player import add, boxed_correct, tool_player  # noqa: E402
from verifiers_lite.rollout import SamplingParams, Template, smollm2_hf_checkpoint  # noqa: E402
from verifiers_lite.rollout.mismatch import hf_scorer as vf_hf_scorer  # noqa: E402
from verifiers_lite.rollout.testing import ScriptedSampler  # noqa: E402
from verifiers_lite.train.grpo import grpo_trainer  # noqa: E402

respond = tool_player(preamble="")


def config(tmp_path: Any, **changes: Any) -> Any:
    base = dict(
        output_dir=str(tmp_path),
        per_device_train_batch_size=4,
        num_generations=4,
        max_steps=2,
        learning_rate=5e-5,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        bf16=False,
        save_strategy="no",
        max_completion_length=16,
        seed=0,
        dataloader_num_workers=0,
    )
    base.update(changes)
    return trl.GRPOConfig(**base)


def capture(trainer: Any) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """What the trainer's loss will see, with the rows the environment produced for it."""
    seen: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    original = trainer._generate_and_score_completions

    def wrapped(inputs: Any) -> Any:
        out = original(inputs)
        seen.append((out, copy.deepcopy(trainer.vf_rollouts.last_rows)))
        return out

    trainer._generate_and_score_completions = wrapped
    return seen


def assert_trl_got_the_rows(seen: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> int:
    compared = 0
    for out, rows in seen:
        assert len(rows) == out["completion_ids"].shape[0]
        for i, row in enumerate(rows):
            prompt = out["prompt_ids"][i][out["prompt_mask"][i].bool()].tolist()
            n = int(out["completion_mask"][i].sum())
            assert prompt == row["prompt_ids"]
            assert out["completion_ids"][i][:n].tolist() == row["completion_ids"]
            assert out["tool_mask"][i][:n].tolist() == row["completion_mask"]
            assert out["sampling_per_token_logps"][i][:n].tolist() == pytest.approx(
                row["completion_logprobs"], rel=1e-6, abs=1e-7
            )
            compared += 1
    return compared


def test_grpo_steps_on_policy(tmp_path: Any) -> None:
    env = vf.load_environment("arithmetic", num_examples=4)
    path = str(smollm2_hf_checkpoint())
    trainer = grpo_trainer(
        env, path, config(tmp_path), sampling_params=SamplingParams(max_tokens=12, logprobs=0)
    )
    seen = capture(trainer)
    before = {k: v.detach().clone() for k, v in trainer.model.named_parameters()}
    trainer.train()
    assert assert_trl_got_the_rows(seen) == 8  # 2 steps x 4 completions
    stats = trainer.vf_rollouts.step_stats
    assert [s["step"] for s in stats] == [0, 1]
    for s in stats:  # on-policy: an independent re-score of the sampled tokens agrees
        assert s["max_abs_diff"] < 1e-3 and abs(s["ratio_mean"] - 1) < 1e-3
    # The reward TRL logged is the rubric's: the mean of the rows' rewards, step by step.
    logged = [h["reward"] for h in trainer.state.log_history if "reward" in h]
    assert logged == pytest.approx([s["reward_mean"] for s in stats])
    assert trainer.use_vllm is False  # on-policy: no importance-sampling correction
    changed = any(not torch.equal(before[k], v) for k, v in trainer.model.named_parameters())
    rewards_vary = any(len({r["reward"] for r in rows}) > 1 for _, rows in seen)
    assert changed == rewards_vary  # GRPO moves the weights only when a group's rewards differ


def test_multi_turn_tool_rollouts_reach_trl_verbatim(tmp_path: Any) -> None:
    path = str(smollm2_hf_checkpoint())
    template = Template.from_pretrained(path)
    data = [{"question": f"What is {i} + 5?", "answer": str(i + 5)} for i in range(2)]
    env = vf.ToolEnv(tools=[add], dataset=data, rubric=vf.Rubric([boxed_correct]), max_turns=3)
    sampler = ScriptedSampler(template, respond)  # not the trained weights: off-policy
    trainer = grpo_trainer(
        env,
        path,
        config(tmp_path, max_steps=1),
        sampler=sampler,
        template=template,
        sampling_params=SamplingParams(max_tokens=64, logprobs=0),
    )
    seen = capture(trainer)
    trainer.train()
    assert assert_trl_got_the_rows(seen) == 4
    rows = seen[0][1]
    assert all(r["turns"] == 2 and r["reward"] == 1.0 for r in rows)
    # The tool answer sits inside the completion and is out of the loss.
    assert all(0 in r["completion_mask"] and r["completion_mask"][0] == 1 for r in rows)
    assert trainer.use_vllm is True  # TRL's importance-sampling correction is on
    assert any("sampling/importance_sampling_ratio/mean" in h for h in trainer.state.log_history)
    # The scripted sampler's logprobs are not the model's: the mismatch report says so.
    assert trainer.vf_rollouts.step_stats[0]["max_abs_diff"] > 0.5


def test_refuses_biased_sampling(tmp_path: Any) -> None:
    env = vf.load_environment("arithmetic", num_examples=2)
    with pytest.raises(ValueError, match="temperature 1.0"):
        grpo_trainer(
            env,
            str(smollm2_hf_checkpoint()),
            config(tmp_path),
            sampling_params=SamplingParams(temperature=0.7, logprobs=0),
        )


def longer_is_better(completion: Any, answer: str = "", **kwargs: Any) -> float:
    # A continuous reward: sampled completions of a group all differ, so every one gets an advantage.
    return len(completion[-1]["content"] if completion else "") / 100.0


def test_one_grpo_step_moves_the_policy_towards_the_rewarded_completions(tmp_path: Any) -> None:
    """The training loop is right when one small step raises the log-likelihood of the completions
    with a positive advantage and lowers that of the negative ones. Both sides are computed here
    independently of TRL: the advantages from the rows' rewards, the log-likelihoods by re-scoring
    the sampled tokens with the model before and after the step. A flipped sign, rewards paired
    with the wrong completions, or a loss on the wrong tokens breaks it."""
    env = vf.SingleTurnEnv(
        dataset=[{"question": "Name a colour.", "answer": ""}], rubric=vf.Rubric([longer_is_better])
    )
    path = str(smollm2_hf_checkpoint())
    trainer = grpo_trainer(
        env,
        path,
        config(
            tmp_path,
            max_steps=1,
            num_generations=8,
            per_device_train_batch_size=8,
            learning_rate=1e-6,
            beta=0.0,
        ),
        sampling_params=SamplingParams(max_tokens=8, logprobs=0),
    )
    seen = capture(trainer)
    trainer.train()
    out, rows = seen[0]
    rewards = torch.tensor([r["reward"] for r in rows])
    expected = (rewards - rewards.mean()) / (
        rewards.std() + 1e-4
    )  # GRPO's group-normalised advantage
    assert out["advantages"].tolist() == pytest.approx(expected.tolist(), rel=1e-3, abs=1e-3)
    score = vf_hf_scorer(trainer.model)
    change = []
    for row in rows:  # sum over the model's tokens of (logprob after - logprob before the step)
        ids = [*row["prompt_ids"], *row["completion_ids"]]
        after = score(ids)[len(row["prompt_ids"]) :]
        change.append(
            sum(
                m * (a - b)
                for m, a, b in zip(
                    row["completion_mask"], after, row["completion_logprobs"], strict=True
                )
            )
        )
    up = [c for c, a in zip(change, expected.tolist(), strict=True) if a > 0]
    down = [c for c, a in zip(change, expected.tolist(), strict=True) if a < 0]
    assert up and down
    assert sum(up) / len(up) > 0 > sum(down) / len(down)
    assert sum(c * a for c, a in zip(change, expected.tolist(), strict=True)) > 0
