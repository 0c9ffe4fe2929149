"""``VLLMSampler``: one batched, token-in/token-out ``vllm.LLM.generate`` call per turn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verifiers_lite._util.extras import require
from verifiers_lite.rollout.sampling import SampleResult, SamplingParams, params_list

__all__ = ["VLLMSampler"]


def _import_vllm() -> Any:
    return require("vllm", "VLLMSampler", "vllm")


class VLLMSampler:
    """Samples a batch of token prompts with an in-process ``vllm.LLM``.

    Pass an ``llm`` you built, or a ``model`` path and ``vllm.LLM`` keyword arguments. vLLM
    starts worker processes with spawn, so scripts that build one need an
    ``if __name__ == "__main__":`` guard. Returned ids are vLLM's output ``token_ids`` as sampled
    (the stop token included); the logprob kept for each is the sampled token's, which vLLM
    always returns alongside the top-``k`` asked for.
    """

    def __init__(self, llm: Any = None, model: str | None = None, **llm_kwargs: Any) -> None:
        vllm = _import_vllm()
        if llm is None:
            if model is None:
                raise ValueError("give VLLMSampler an llm or a model path")
            llm = vllm.LLM(model=model, **llm_kwargs)
        self.llm = llm
        self._vllm = vllm
        self.max_context_tokens: int | None = _max_model_len(llm)

    def _params(self, p: SamplingParams) -> Any:
        kwargs: dict[str, Any] = dict(
            temperature=p.temperature,
            top_p=p.top_p,
            top_k=p.top_k if p.top_k > 0 else -1,
            max_tokens=p.max_tokens,
            stop=list(p.stop) or None,
            stop_token_ids=list(p.stop_token_ids) or None,
            seed=p.seed,
            repetition_penalty=p.repetition_penalty,
            logprobs=p.logprobs,
            # Stop strings must not cut ids: we keep every sampled token.
            include_stop_str_in_output=True,
        )
        kwargs.update(p.extra)
        return self._vllm.SamplingParams(**kwargs)

    def sample(
        self, prompts: Sequence[Sequence[int]], params: SamplingParams | Sequence[SamplingParams]
    ) -> list[SampleResult]:
        plist = params_list(params, len(prompts))
        inputs = [{"prompt_token_ids": list(p)} for p in prompts]
        outputs = self.llm.generate(inputs, [self._params(p) for p in plist], use_tqdm=False)
        results = []
        for out, p in zip(outputs, plist, strict=True):
            comp = out.outputs[0]
            ids = list(comp.token_ids)
            logprobs = top = None
            if p.logprobs is not None:
                steps = list(comp.logprobs or [])
                if len(steps) != len(ids):
                    raise RuntimeError(
                        f"vLLM returned {len(steps)} logprob steps for {len(ids)} ids"
                    )
                logprobs = [float(step[tok].logprob) for step, tok in zip(steps, ids, strict=True)]
                if p.logprobs > 0:
                    # Each step holds the sampled id plus the top-k; keep the top-k by rank.
                    top = [
                        {
                            int(t): float(v.logprob)
                            for t, v in sorted(step.items(), key=lambda kv: kv[1].rank or 0)
                            if v.rank is not None and v.rank <= p.logprobs
                        }
                        for step in steps
                    ]
            finish = "length" if comp.finish_reason == "length" else "stop"
            results.append(
                SampleResult(ids, finish, logprobs, comp.text, top)  # type: ignore[arg-type]
            )
        return results

    def close(self) -> None:
        """Stop vLLM's engine processes now rather than at interpreter exit."""
        engine = getattr(self.llm, "llm_engine", None)
        core = getattr(engine, "engine_core", None)
        if core is not None and hasattr(core, "shutdown"):
            core.shutdown()


def _max_model_len(llm: Any) -> int | None:
    """The engine's context window (``max_model_len``), when it can be read."""
    try:
        return int(llm.llm_engine.model_config.max_model_len)
    except (AttributeError, TypeError, ValueError):
        return None
