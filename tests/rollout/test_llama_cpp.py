"""Real SmolLM2 through llama.cpp: tokenizer properties, sampler contract, rollout invariants."""

from __future__ import annotations

import pytest

from tests.rollout import real_model_checks as checks

pytestmark = pytest.mark.local_model


def test_template_from_gguf_renders_chatml(llama_template) -> None:
    text = llama_template.render([{"role": "user", "content": "hi"}], add_generation_prompt=True)
    assert text.endswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
    ids = llama_template.encode(text)
    assert llama_template.decode(ids) == text
    assert ids.count(llama_template.stop_token_ids[0]) == 2  # specials are single ids


def test_bridge_property(llama_template) -> None:
    checks.bridge_property(llama_template)


def test_sampler_contract(llama_sampler, llama_template) -> None:
    checks.sampler_contract(llama_sampler, llama_template)


def test_rollout_properties(llama_sampler, llama_template) -> None:
    checks.rollout_properties(llama_sampler, llama_template, examples=4)


def test_tool_use_with_real_model(llama_sampler, llama_template) -> None:
    checks.tool_use_with_real_model(llama_sampler, llama_template)


def test_batch_independence(llama_sampler, llama_template) -> None:
    checks.batch_independence(llama_sampler, llama_template)


def test_sampler_pickles_as_a_model_reload(llama_sampler, llama_template) -> None:
    import pickle

    from verifiers_lite.rollout import SamplingParams

    clone = pickle.loads(pickle.dumps(llama_sampler))
    assert clone.llama is not llama_sampler.llama
    prompt = llama_template.encode_messages([{"role": "user", "content": "Say hi."}])
    p = SamplingParams(temperature=0.0, max_tokens=6)
    assert clone.sample([prompt], p)[0].token_ids == llama_sampler.sample([prompt], p)[0].token_ids
