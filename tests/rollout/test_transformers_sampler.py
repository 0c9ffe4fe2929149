"""TransformersSampler: its logprobs are the model's own, checked against an independent
transformers re-score of the sampled ids (one unpadded forward pass per sequence, no cache)."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.train

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def model() -> Any:
    from transformers import AutoModelForCausalLM

    from verifiers_lite.rollout import smollm2_hf_checkpoint

    return AutoModelForCausalLM.from_pretrained(str(smollm2_hf_checkpoint()), dtype=torch.float32)


@pytest.fixture(scope="module")
def template() -> Any:
    from verifiers_lite.rollout import Template, smollm2_hf_checkpoint

    return Template.from_pretrained(str(smollm2_hf_checkpoint()))


def prompts(template: Any) -> list[list[int]]:
    # Different lengths, so the batch is left-padded.
    questions = [
        "What is 2 + 2?",
        "Name a colour.",
        "Write one short sentence about the sea and the sky.",
    ]
    return [
        template.encode_messages([{"role": "user", "content": q}], add_generation_prompt=True)
        for q in questions
    ]


def rescore(model: Any, ids: list[int]) -> list[float]:
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0].float()
    lp = torch.log_softmax(logits[:-1], dim=-1)
    return lp.gather(1, torch.tensor(ids[1:]).unsqueeze(1)).squeeze(1).tolist()


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_logprobs_equal_an_independent_rescore(
    model: Any, template: Any, temperature: float
) -> None:
    from verifiers_lite.rollout import SamplingParams, TransformersSampler

    sampler = TransformersSampler(model)
    ps = prompts(template)
    params = SamplingParams(temperature=temperature, max_tokens=20, logprobs=0, seed=11)
    results = sampler.sample(ps, params)
    assert len(results) == len(ps)
    for prompt, res in zip(ps, results, strict=True):
        assert res.token_ids and len(res.logprobs) == len(res.token_ids)
        ids = prompt + res.token_ids
        expected = rescore(model, ids)[len(prompt) - 1 :]
        # Raw model logprobs (before temperature), whatever the sampling temperature.
        assert res.logprobs == pytest.approx(expected, abs=2e-4)
        assert res.finish_reason == (
            "stop" if res.token_ids[-1] in sampler.eos_token_ids else "length"
        )


def test_seeded_samples_do_not_depend_on_the_batch(model: Any, template: Any) -> None:
    from verifiers_lite.rollout import SamplingParams, TransformersSampler

    sampler = TransformersSampler(model, max_batch_size=8)
    ps = prompts(template)
    params = SamplingParams(max_tokens=12, logprobs=0, seed=3)
    together = sampler.sample(ps, params)
    alone = sampler.sample([ps[1]], params)[0]
    assert together[1].token_ids == alone.token_ids
    other = sampler.sample([ps[1]], params.replace(seed=4))[0]
    assert other.token_ids != alone.token_ids  # a different seed draws differently


def test_greedy_equals_transformers_generate(model: Any, template: Any) -> None:
    from verifiers_lite.rollout import SamplingParams, TransformersSampler

    prompt = prompts(template)[0]
    res = TransformersSampler(model).sample(
        [prompt], SamplingParams(temperature=0.0, max_tokens=10)
    )[0]
    with torch.no_grad():
        ref = model.generate(torch.tensor([prompt]), max_new_tokens=10, do_sample=False)[
            0, len(prompt) :
        ]
    assert res.token_ids == ref.tolist()[: len(res.token_ids)]


def test_training_mode_is_restored_and_bad_params_refused(model: Any, template: Any) -> None:
    from verifiers_lite.rollout import SamplingParams, TransformersSampler

    sampler = TransformersSampler(model)
    model.train()
    sampler.sample(prompts(template)[:1], SamplingParams(max_tokens=2))
    assert model.training
    model.eval()
    with pytest.raises(ValueError, match="repetition_penalty"):
        sampler.sample(prompts(template)[:1], SamplingParams(repetition_penalty=1.2))
    with pytest.raises(ValueError, match="tokenizer"):
        sampler.sample(prompts(template)[:1], SamplingParams(stop=("x",)))
