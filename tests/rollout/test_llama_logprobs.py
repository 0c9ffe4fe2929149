"""LlamaCppSampler logprobs against an independent full-forward re-score, at any context length.

The reference is a second ``llama_cpp.Llama`` with ``logits_all=True`` that evaluates the sampled
ids in one forward pass after the prompt and takes log-softmax of every position's logits: no
project code, and a different code path (batched, as a prefill) from the sampler's token-by-token
decoding. It also re-scores token by token, through llama-cpp-python's own logits buffer.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from verifiers_lite.rollout import MultiTurnRollout, SamplingParams

pytestmark = pytest.mark.local_model

# Tolerances, per sampled token. The full forward evaluates all positions in one batch, where
# llama.cpp picks other matmul kernels than for one-token decoding: measured on SmolLM2 Q4_1,
# max 0.10 / mean 0.03 on a short prompt, max 0.01 past 512 tokens. A token-by-token re-score
# (same kernels as sampling, but llama-cpp-python's own logits_all buffer) agrees to ~1e-15.
# A constant -log(V) vector misses both by > 8.
FULL_MAX, FULL_MEAN, STEP_MAX = 0.25, 0.06, 1e-4
FILLER = "The quick brown fox jumps over the lazy dog while the cat sleeps. "


@pytest.fixture(scope="module")
def rescore(llama: Any) -> Any:
    import llama_cpp

    ref = llama_cpp.Llama(
        model_path=llama.model_path, n_ctx=1024, n_threads=1, logits_all=True, verbose=False
    )

    def log_softmax(rows: np.ndarray) -> np.ndarray:
        m = rows.max(axis=1, keepdims=True)
        return rows - (m + np.log(np.exp(rows - m).sum(axis=1, keepdims=True)))

    def score(prompt: list[int], sampled: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """log p(sampled[i] | prompt + sampled[:i]): sampled ids in one forward pass over the
        prompt's cache, and token by token."""
        cached = ref.input_ids[: ref.n_tokens].tolist()
        if len(cached) >= len(prompt) and cached[: len(prompt)] == prompt:
            ref.n_tokens = len(prompt)  # the prompt's cache and logits rows are still there
        else:
            ref.reset()
            ref.eval(prompt)
        last = np.asarray(ref.scores[len(prompt) - 1 : len(prompt)], dtype=np.float64)
        ref.eval(sampled)  # one batch: the kernels of a prefill
        rows = np.asarray(ref.scores[len(prompt) : len(prompt) + len(sampled) - 1])
        full = log_softmax(np.concatenate([last, rows.astype(np.float64)]))
        whole = np.array([full[i, t] for i, t in enumerate(sampled)])
        ref.n_tokens = len(prompt)  # rewind, then one token at a time as when sampling
        steps = [log_softmax(last)[0, sampled[0]]]
        for prev, t in zip(sampled, sampled[1:], strict=False):
            ref.eval([prev])
            row = np.asarray(ref.scores[ref.n_tokens - 1 : ref.n_tokens], dtype=np.float64)
            steps.append(log_softmax(row)[0, t])
        return whole, np.array(steps)

    return score


def _check(
    sampler_lps: list[float],
    ref: tuple[np.ndarray, np.ndarray],
    vocab: int,
    step_max: float = STEP_MAX,
) -> None:
    got = np.asarray(sampler_lps)
    full, steps = ref
    assert got.shape == full.shape == steps.shape
    diff = np.abs(got - full)
    assert diff.max() < FULL_MAX and diff.mean() < FULL_MEAN, (diff.max(), diff.mean())
    assert np.abs(got - steps).max() < step_max, np.abs(got - steps).max()
    # The comparison has power: a constant uniform vector (the old bug) would be rejected.
    assert np.abs(-math.log(vocab) - full).max() > 10 * FULL_MAX
    assert np.ptp(full) > 0.05  # real per-token values vary (a constant has ptp 0)


def test_logprobs_match_rescore_short_prompt(llama_sampler, llama_template, rescore) -> None:
    prompt = llama_template.encode_messages([{"role": "user", "content": "Name three colours."}])
    p = SamplingParams(temperature=1.0, max_tokens=32, seed=3, logprobs=5)
    (res,) = llama_sampler.sample([prompt], p)
    ref = rescore(prompt, res.token_ids)
    _check(res.logprobs, ref, llama_sampler.llama.n_vocab())
    # Top-k alternatives: sorted, and the sampled token's logprob never beats the best one.
    assert res.top_logprobs is not None and len(res.top_logprobs) == len(res.token_ids)
    for lp, top in zip(res.logprobs, res.top_logprobs, strict=True):
        values = list(top.values())
        assert len(top) == 5 and values == sorted(values, reverse=True)
        assert lp <= values[0] + 1e-9


LONG = [{"role": "user", "content": FILLER * 40 + "Summarise in one line."}]


def test_logprobs_match_rescore_past_n_batch(llama_sampler, llama_template, rescore) -> None:
    prompt = llama_template.encode_messages(LONG)
    assert 512 < len(prompt) < 900  # past llama.cpp's n_batch=512, inside n_ctx=1024
    p = SamplingParams(temperature=1.0, max_tokens=40, seed=5, logprobs=0)
    (res,) = llama_sampler.sample([prompt], p)
    assert res.top_logprobs is None
    _check(res.logprobs, rescore(prompt, res.token_ids), llama_sampler.llama.n_vocab())


def test_mixed_batch_long_and_too_long(llama_sampler, llama_template, rescore) -> None:
    # The long prompt first: the sampler's and the re-scorer's caches still hold it.
    convs = [
        LONG,
        [{"role": "user", "content": "Say hi."}],
        [{"role": "user", "content": FILLER * 90 + "Too long for the context."}],
    ]
    rollout = MultiTurnRollout(
        llama_sampler,
        llama_template,
        sampling_params=SamplingParams(temperature=0.8, max_tokens=24, seed=1, logprobs=0),
    )
    long, short, too_long = rollout(convs)
    assert too_long["stop_reason"] == "error" and too_long["error"]["category"] == "prompt_too_long"
    assert "sampler context=1024" in too_long["error"]["message"]
    for t in (long, short):
        assert t["stop_reason"] in ("stop", "length") and t["error"] is None
        mask = t["completion_mask"]
        sampled = [tok for tok, m in zip(t["completion_ids"], mask, strict=True) if m]
        # The sampler's prefix cache held the long prompt but its last token, which it then
        # decoded alone (one-token kernels): token-by-token agreement is then only approximate.
        _check(
            [lp for lp, m in zip(t["completion_logprobs"], mask, strict=True) if m],
            rescore(t["prompt_ids"], sampled),
            llama_sampler.llama.n_vocab(),
            step_max=FULL_MAX,
        )
    assert long["prompt_length"] > 512
