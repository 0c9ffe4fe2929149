"""The validation probe inside a real GRPO run: it scores the fixed questions before the first
step and every ``every`` steps with the weights being trained, and its rule stops training."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.train

torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")

import verifiers_lite as vf  # noqa: E402
from verifiers_lite.rollout import SamplingParams, Template, smollm2_hf_checkpoint  # noqa: E402
from verifiers_lite.train import PlateauStop, ValidationProbe  # noqa: E402


def _trainer(tmp_path: Any, lr: float) -> Any:
    from transformers import AutoModelForCausalLM

    path = str(smollm2_hf_checkpoint())
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    env = vf.load_environment("arithmetic", num_examples=8, digits=2, operations="+", split="train")
    args = trl.GRPOConfig(
        output_dir=str(tmp_path / "trainer"),
        max_steps=4,
        learning_rate=lr,
        per_device_train_batch_size=4,
        num_generations=2,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        bf16=False,
        save_strategy="no",
        max_completion_length=8,
        beta=0.0,
        gradient_checkpointing=False,
        shuffle_dataset=False,
    )
    return vf.train.grpo_trainer(
        env,
        model,
        args,
        template=Template.from_pretrained(path),
        ratio_every=0,
        sampling_params=SamplingParams(max_tokens=8, logprobs=0),
    )


def test_an_unchanged_policy_plateaus_and_the_probe_stops_training(tmp_path: Any) -> None:
    trainer = _trainer(tmp_path, lr=0.0)  # the weights never move: every probe scores the same
    probe_env = vf.load_environment(
        "arithmetic", num_examples=6, digits=2, operations="+", split="validation"
    )
    probe = ValidationProbe(
        probe_env,
        trainer.vf_rollouts.template,
        every=1,
        rollouts_per_example=2,
        rule=PlateauStop(patience=2),
        max_tokens=8,
        seed=3,
    )
    trainer.add_callback(probe.callback())
    trainer.train()
    assert [h["step"] for h in probe.history] == [0, 1, 2]
    rewards = [h["reward"] for h in probe.history]
    assert rewards == [rewards[0]] * 3  # the same draws of the same weights
    assert probe.stopped_at == 2 and trainer.state.global_step == 2  # max_steps was 4
    # The probe's figure is the mean over its rollouts, re-scored independently here.
    client = vf.rollout.TokenClient(
        vf.rollout.TransformersSampler(trainer.model),
        trainer.vf_rollouts.template,
        SamplingParams(max_tokens=8, logprobs=0),
    )
    out = probe_env.generate_sync(
        probe_env.get_eval_inputs(rollouts_per_example=2), client, "probe", seed=3, progress=False
    )
    assert rewards[0] == pytest.approx(sum(r["reward"] for r in out.rows) / len(out.rows))
