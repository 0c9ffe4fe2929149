"""``LlamaCppSampler``: token-level sampling from an in-process ``llama_cpp.Llama``."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from typing import Any

from verifiers_lite._util.cpus import usable_cpus
from verifiers_lite._util.extras import require
from verifiers_lite.rollout.sampling import SampleResult, SamplingParams, params_list

__all__ = ["LlamaCppSampler", "load_llama"]


def load_llama(model_path: str | os.PathLike[str] | None = None, **kwargs: Any) -> Any:
    """A ``llama_cpp.Llama`` over ``model_path`` (default: the embedded SmolLM2 GGUF)."""
    llama_cpp = require("llama_cpp", "LlamaCppSampler", "local", package="llama-cpp-python")
    from verifiers_lite.local.cpu_safety import apply_to_llama_cpp

    apply_to_llama_cpp()  # a native build on an AMX CPU would crash on the first decode
    if model_path is None:
        from verifiers_lite.local.models import smollm2_gguf_path

        model_path = smollm2_gguf_path()
    # Half the cores, as llama.cpp itself defaults: its threads spin-wait, so on busy cores
    # (2 threads on 2 shared cores) decoding was measured ~20x slower than with 1 thread.
    opts: dict[str, Any] = {
        "n_ctx": 2048,
        "n_threads": max(1, usable_cpus() // 2),
        "verbose": False,
    }
    opts.update(kwargs)
    return llama_cpp.Llama(model_path=str(model_path), **opts)


class LlamaCppSampler:
    """Samples token prompts one after another on a ``llama_cpp.Llama`` (it has no batching).

    Returned ids are exactly the sampled ids, the stop token included; logprobs are the raw
    model log-softmax (before temperature/top-p) of the sampled token, read from the logits of
    the position that produced it, so no ``logits_all`` buffer is needed and any context length
    works. With a ``seed`` each prompt is sampled from a freshly seeded sampler, so its result
    does not depend on the batch it came in. llama.cpp's prefix cache is reused between prompts
    sharing a prefix (multi-turn prompts always do).
    """

    def __init__(
        self,
        llama: Any = None,
        model_path: str | os.PathLike[str] | None = None,
        **llama_kwargs: Any,
    ) -> None:
        self._model_path = model_path
        self._llama_kwargs = llama_kwargs
        self.llama = llama if llama is not None else load_llama(model_path, **llama_kwargs)
        self.max_context_tokens: int = int(self.llama.n_ctx())
        # A Llama object holds one KV cache: concurrent sample() calls would corrupt it.
        self._lock = threading.Lock()

    def __reduce__(self) -> Any:
        # Pickle (e.g. into a Ray actor) as "load the same model there".
        path = str(self._model_path or self.llama.model_path)
        return (_rebuild, (path, self._llama_kwargs))

    def sample(
        self, prompts: Sequence[Sequence[int]], params: SamplingParams | Sequence[SamplingParams]
    ) -> list[SampleResult]:
        plist = params_list(params, len(prompts))
        with self._lock:
            return [self._one(list(p), sp) for p, sp in zip(prompts, plist, strict=True)]

    def _one(self, prompt: list[int], p: SamplingParams) -> SampleResult:
        llm = self.llama
        if len(prompt) + 1 > llm.n_ctx():
            raise ValueError(f"prompt of {len(prompt)} tokens does not fit n_ctx={llm.n_ctx()}")
        max_tokens = min(p.max_tokens, llm.n_ctx() - len(prompt))
        stop_ids = set(p.stop_token_ids)
        stop_ids.add(llm.token_eos())
        if p.seed is not None:
            llm.set_seed(p.seed)
        out: list[int] = []
        want = p.logprobs is not None
        logprobs: list[float] = []
        top: list[dict[int, float]] = []
        finish = "length"
        gen = llm.generate(
            prompt,
            top_k=p.top_k if p.top_k > 0 else 0,
            top_p=p.top_p,
            temp=p.temperature,
            repeat_penalty=p.repetition_penalty,
            reset=True,
        )
        text = b""
        try:
            for tok in gen:
                if want:
                    # At each yield the context holds the logits of the position that produced
                    # ``tok`` (llama.cpp samples from logits index -1 too).
                    row = _last_logits(llm)
                    lp = _log_softmax(row)
                    logprobs.append(float(lp[tok]))
                    if p.logprobs:
                        top.append(_top_k(lp, p.logprobs))
                out.append(tok)
                if tok in stop_ids:
                    finish = "stop"
                    break
                if p.stop:
                    text += llm.detokenize([tok], special=True)
                    decoded = text.decode("utf-8", errors="ignore")
                    if any(s in decoded for s in p.stop):
                        finish = "stop"
                        break
                if len(out) >= max_tokens:
                    break
        finally:
            gen.close()
        return SampleResult(
            out,
            finish,  # type: ignore[arg-type]
            logprobs if want else None,
            top_logprobs=top if want and p.logprobs else None,
        )


def _rebuild(model_path: str, llama_kwargs: dict[str, Any]) -> LlamaCppSampler:
    return LlamaCppSampler(None, model_path, **llama_kwargs)


def _last_logits(llm: Any) -> Any:
    """The logits row of the last evaluated position, straight from the llama.cpp context."""
    import llama_cpp
    import numpy as np

    ptr = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
    if not ptr:
        raise RuntimeError("llama.cpp returned no logits for the last position")
    return np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),))


def _log_softmax(row: Any) -> Any:
    """log softmax(row) in float64, computed stably."""
    import numpy as np

    x = np.asarray(row, dtype=np.float64)
    x = x - x.max()
    return x - math.log(float(np.exp(x).sum()))


def _top_k(lp: Any, k: int) -> dict[int, float]:
    """The ``k`` most likely ids and their logprobs, most likely first."""
    import numpy as np

    k = min(k, lp.shape[0])
    idx = np.argpartition(-lp, k - 1)[:k]
    idx = idx[np.argsort(-lp[idx])]
    return {int(i): float(lp[i]) for i in idx}
