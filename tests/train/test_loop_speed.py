"""The faster training loop's pieces: a GRPO group prefilled once gives the samples each prompt
gets alone, and its completions' scores; a LoRA adapter through TRL's ``peft_config`` is what
trains and samples; the step profiler's phases account for each step's wall time; the trainer's
pass with each distinct prompt run once gives TRL's logprobs, entropies and gradients."""

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


def test_score_gives_the_sampled_tokens_their_sampler_and_single_pass_logprobs(model: Any) -> None:
    from verifiers_lite.rollout.mismatch import hf_scorer

    template = Template.from_pretrained(str(smollm2_hf_checkpoint()))
    a, b = (
        template.encode_messages([{"role": "user", "content": q}], add_generation_prompt=True)
        for q in ("What is 3 - 8?", "Name a colour of the sea.")
    )
    prompts = [a, b, a, b, a]
    params = [SamplingParams(max_tokens=5, logprobs=0, seed=7 + i) for i in range(len(prompts))]
    sampler = TransformersSampler(model)
    samples = sampler.sample(prompts, params)
    calls = sampler.prefill_calls
    scored = sampler.score(prompts, [s.token_ids for s in samples])
    assert sampler.prefill_calls == calls + 1  # one prefill for the batch's two distinct prompts
    alone = hf_scorer(model)  # one unpadded pass per sequence: an independent computation
    for prompt, sample, got in zip(prompts, samples, scored, strict=True):
        assert len(got) == len(sample.token_ids)
        assert got == pytest.approx(sample.logprobs, abs=1e-4)
        assert got == pytest.approx(alone([*prompt, *sample.token_ids])[len(prompt) :], abs=1e-4)
    assert sampler.score([a], [[]]) == [[]]


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


def _batch(template: Any, pad: int) -> tuple[Any, Any, int]:
    """Two prompts of different lengths (left-padded), three rows each, interleaved, with
    completions of different lengths (right-padded), laid out as TRL's loss pass gets them."""
    prompts = [
        template.encode_messages([{"role": "user", "content": q}], add_generation_prompt=True)
        for q in ("What is 3 - 8?", "Name a colour of the sea, please.")
    ]
    completions = [[40, 41, 42], [43, 44], [45, 46, 47, 48], [49], [50, 51, 52], [53, 54]]
    width, keep = max(len(p) for p in prompts), max(len(c) for c in completions)
    ids = torch.full((6, width + keep), pad, dtype=torch.long)
    mask = torch.zeros((6, width + keep), dtype=torch.long)
    for row, comp in enumerate(completions):
        prompt = prompts[row % 2]
        ids[row, width - len(prompt) : width] = torch.tensor(prompt)
        mask[row, width - len(prompt) : width] = 1
        ids[row, width : width + len(comp)] = torch.tensor(comp)
        mask[row, width : width + len(comp)] = 1
    return ids, mask, keep


def test_the_shared_prompt_pass_gives_trls_logprobs_entropies_and_gradients(
    tmp_path: Any,
) -> None:
    peft = pytest.importorskip("peft")
    from verifiers_lite.train.shared_prompt import share_prompt_pass

    env = vf.load_environment("arithmetic", num_examples=8, operations="-")
    lora = peft.LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", task_type="CAUSAL_LM")
    trainer = vf.train.grpo_trainer(
        env,
        str(smollm2_hf_checkpoint()),
        config(tmp_path, beta=0.0),
        sampling_params=SamplingParams(max_tokens=8, logprobs=0),
        peft_config=lora,
        share_prompt=False,  # TRL's own pass: the reference
    )
    torch.manual_seed(0)
    lora_b = {k: v for k, v in trainer.model.named_parameters() if "lora_B" in k}
    with torch.no_grad():  # a trained-looking adapter (B starts at 0: A's gradient would be 0)
        for v in lora_b.values():
            v.normal_(0, 0.02)
    ids, mask, keep = _batch(Template.from_pretrained(str(smollm2_hf_checkpoint())), pad=2)
    completion_mask = mask[:, -keep:].float()
    trainer.model.train()

    def pass_and_grads() -> tuple[Any, Any, dict[str, Any]]:
        trainer.model.zero_grad()
        logps, ent, _ = trainer._get_per_token_logps_and_entropies(
            trainer.model, ids, mask, keep, compute_entropy=True
        )
        ((logps * completion_mask).sum() + (ent * completion_mask).sum()).backward()
        grads = {
            k: v.grad.clone() for k, v in trainer.model.named_parameters() if v.grad is not None
        }
        return logps.detach() * completion_mask, ent.detach() * completion_mask, grads

    ref = pass_and_grads()
    share_prompt_pass(trainer)
    got = pass_and_grads()
    assert torch.allclose(got[0], ref[0], atol=2e-4) and torch.allclose(got[1], ref[1], atol=2e-4)
    assert ref[2].keys() == got[2].keys() and any("lora_A" in k for k in ref[2])
    for k, g in ref[2].items():
        assert torch.allclose(got[2][k], g, rtol=1e-3, atol=1e-5 * g.abs().max()), k
    # Each distinct prompt ran once: 2 of the 6 rows' prompts (all but the last token).
    width = ids.size(1) - keep - 1
    assert (trainer.vf_prompt_tokens, trainer.vf_prompt_tokens_unshared) == (2 * width, 6 * width)
