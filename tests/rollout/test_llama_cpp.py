"""Real SmolLM2 through llama.cpp: tokenizer properties, sampler contract, rollout invariants."""

from __future__ import annotations

import pytest
import real_model_checks as checks

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
