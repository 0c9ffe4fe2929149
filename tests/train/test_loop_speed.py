"""The faster training loop's pieces: a GRPO group prefilled once gives the samples each prompt
gets alone; a LoRA adapter through TRL's ``peft_config`` is what trains and samples; the step
profiler's phases account for each step's wall time."""

from __future__ import annotations

import time
from typing import Any

import pytest

pytestmark = pytest.mark.train

torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")

import verifiers_lite as vf  # noqa: E402
from verifiers_lite.rollout import (  # noqa: E402
    SamplingParams,
    Template,
    TransformersSampler,
    smollm2_hf_checkpoint,
)
from verifiers_lite.train import StepProfiler  # noqa: E402


@pytest.fixture(scope="module")
def model() -> Any:
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(smollm2_hf_checkpoint()), dtype=torch.float32)


def test_a_group_prefilled_once_samples_what_each_prompt_samples_alone(model: Any) -> None:
    template = Template.from_pretrained(str(smollm2_hf_checkpoint()))
    a, b = (
        template.encode_messages([{"role": "user", "content": q}], add_generation_prompt=True)
        for q in ("What is 3 - 8?", "Name a colour of the sea.")
    )
    prompts = [a, b, a, a, b, a]  # two groups, interleaved as a scheduler may hand them over
    params = [SamplingParams(max_tokens=6, logprobs=0, seed=100 + i) for i in range(len(prompts))]
    sampler = TransformersSampler(model)
    batched = sampler.sample(prompts, params)
    assert (sampler.prefill_calls, sampler.prefill_tokens) == (
        1,
        len(a) + len(b),
    )  # each distinct prompt once
    for prompt, p, got in zip(prompts, params, batched, strict=True):
        (alone,) = TransformersSampler(model).sample(
            [prompt], [p]
        )  # a batch of one: nothing shared
        assert got.token_ids == alone.token_ids
        assert got.logprobs == pytest.approx(alone.logprobs, abs=1e-4)
    unshared = TransformersSampler(model, share_prefill=False)
    unshared.sample(prompts, params)
    assert unshared.prefill_tokens == sum(len(p) for p in prompts)


def config(tmp_path: Any, **changes: Any) -> Any:
    base = dict(
        output_dir=str(tmp_path),
        per_device_train_batch_size=8,
        num_generations=4,
        max_steps=2,
        learning_rate=1e-3,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        bf16=False,
        save_strategy="no",
        max_completion_length=8,
        seed=0,
        dataloader_num_workers=0,
        beta=0.02,
    )
    base.update(changes)
    return trl.GRPOConfig(**base)


def test_lora_steps_train_the_adapter_and_the_profiler_accounts_for_each_step(
    tmp_path: Any, model: Any
) -> None:
    peft = pytest.importorskip("peft")
    env = vf.load_environment("arithmetic", num_examples=8, operations="-")
    lora = peft.LoraConfig(
        r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"
    )
    trainer = vf.train.grpo_trainer(
        env,
        str(smollm2_hf_checkpoint()),
        config(tmp_path),
        ratio_every=2,
        sampling_params=SamplingParams(max_tokens=8, logprobs=0),
        peft_config=lora,
    )
    profiler = StepProfiler.attach(trainer)
    trainable = {
        k: v.detach().clone() for k, v in trainer.model.named_parameters() if v.requires_grad
    }
    frozen = {
        k: v.detach().clone() for k, v in trainer.model.named_parameters() if not v.requires_grad
    }
    assert trainable and all("lora_" in k for k in trainable)
    t0 = time.perf_counter()
    trainer.train()
    wall = time.perf_counter() - t0
    after = dict(trainer.model.named_parameters())
    assert all(
        torch.equal(v, after[k]) for k, v in frozen.items()
    )  # the base weights stay as they were
    stats = trainer.vf_rollouts.step_stats
    moved = any(not torch.equal(v, after[k]) for k, v in trainable.items())
    logged = [h for h in trainer.state.log_history if "frac_reward_zero_std" in h]
    assert moved == any(h["frac_reward_zero_std"] < 1 for h in logged)  # a group's rewards differed
    # On-policy through the adapter: a re-score on every 2nd step agrees with the sampler, and the
    # KL to the base model (adapter off) is measured there; TRL's own KL (beta > 0) is logged too.
    assert "ratio_mean" not in stats[0] and abs(stats[1]["ratio_mean"] - 1) < 1e-3
    assert stats[1]["kl_to_base"] >= 0 and [h["kl"] for h in trainer.state.log_history if "kl" in h]
    assert len(profiler.steps) == 2
    for st in profiler.steps:
        phases = st.as_dict()
        total = phases.pop("total")
        phases.pop("step")
        assert all(v >= 0 for v in phases.values()), phases
        assert sum(phases.values()) == pytest.approx(total, abs=0.02)  # nothing unaccounted for
        assert st.sampling > 0 and st.forward_backward > 0 and st.optimizer > 0
    assert sum(st.total for st in profiler.steps) <= wall  # the steps lie within the run
    assert "forward_backward" in profiler.table()
