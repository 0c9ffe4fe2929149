"""Shared real-model fixtures: the llama.cpp SmolLM2 model is loaded once per session."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None


@pytest.fixture(scope="session")
def llama() -> Any:
    if not HAS_LLAMA:
        pytest.skip("llama_cpp not importable: pip install 'verifiers_lite[local]'")
    from verifiers_lite.rollout.samplers.llama_cpp import load_llama

    return load_llama(n_ctx=1024, n_threads=1)


@pytest.fixture(scope="session")
def llama_sampler(llama: Any) -> Any:
    from verifiers_lite.rollout import LlamaCppSampler

    return LlamaCppSampler(llama)


@pytest.fixture(scope="session")
def llama_template(llama: Any) -> Any:
    from verifiers_lite.rollout import Template

    return Template.from_llama(llama)
