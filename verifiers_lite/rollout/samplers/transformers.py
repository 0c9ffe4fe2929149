"""``TransformersSampler``: token ids in, sampled ids and their logprobs out, from an in-process
``transformers`` causal LM, batched (left padding, one KV cache per batch). Identical prompts in a
batch (a GRPO group) are prefilled once and their KV cache is copied to each sample.

Hand it the model a trainer is updating and the rollouts are on-policy: the logprobs are the
trained weights' own, computed in float32 from the same forward pass that drew each token.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verifiers_lite._util.extras import require
from verifiers_lite.rollout.sampling import SampleResult, SamplingParams, params_list

__all__ = ["TransformersSampler"]


def _torch() -> Any:
    return require("torch", "TransformersSampler", "train")


class TransformersSampler:
    """Samples a batch of token prompts with a ``transformers`` causal LM on its device.

    ``model`` is a model object (shared, not copied: a trainer's updates are seen by the next
    call) or a checkpoint path (loaded in ``dtype``). ``tokenizer`` is needed only for ``stop``
    strings. Logprobs are the raw model distribution's (before temperature, top-k, top-p), like
    the other samplers'; ``seed`` gives each prompt its own generator, so a prompt's sample does
    not depend on its batch. ``repetition_penalty`` other than 1 and ``extra`` keys are refused.
    ``share_prefill=False`` prefills every prompt on its own row (the same samples, more work);
    ``prefill_calls``/``prefill_tokens`` count the prompt forward passes and the tokens they ran.
    :meth:`score` gives the logprobs of given completions the same way (a prompt prefilled once).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        *,
        dtype: str = "float32",
        max_batch_size: int = 64,
        max_context_tokens: int | None = None,
        share_prefill: bool = True,
    ) -> None:
        torch = _torch()
        if isinstance(model, str) or not hasattr(model, "config"):
            transformers = require("transformers", "TransformersSampler", "train")
            path = str(model)
            model = transformers.AutoModelForCausalLM.from_pretrained(
                path, dtype=getattr(torch, dtype)
            )
            tokenizer = tokenizer or transformers.AutoTokenizer.from_pretrained(path)
        if max_batch_size < 1:
            raise ValueError(f"max_batch_size must be >= 1, got {max_batch_size}")
        self.model = model
        self.tokenizer = tokenizer
        self.max_batch_size = max_batch_size
        self.share_prefill = share_prefill
        self.prefill_calls = 0
        self.prefill_tokens = 0
        self.max_context_tokens = max_context_tokens or getattr(
            model.config, "max_position_embeddings", None
        )
        self._pad = int(getattr(model.config, "pad_token_id", None) or 0)
        # The model's end-of-sequence ids stop a sample, as they do in vLLM and llama.cpp.
        eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        eos = eos if eos is not None else getattr(model.config, "eos_token_id", None)
        self.eos_token_ids: frozenset[int] = frozenset(
            [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
        )

    def sample(
        self, prompts: Sequence[Sequence[int]], params: SamplingParams | Sequence[SamplingParams]
    ) -> list[SampleResult]:
        plist = params_list(params, len(prompts))
        for p in plist:
            self._check(p)
        for i, prompt in enumerate(prompts):
            if not prompt:
                raise ValueError(f"prompt {i} is empty")
        torch = _torch()
        was_training = self.model.training
        self.model.eval()  # no dropout while sampling; the trainer's mode is restored below
        try:
            with torch.no_grad():
                out: list[SampleResult] = []
                for start in range(0, len(prompts), self.max_batch_size):
                    end = start + self.max_batch_size
                    out += self._sample_batch(list(prompts[start:end]), plist[start:end])
                return out
        finally:
            self.model.train(was_training)

    def score(
        self, prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]]
    ) -> list[list[float]]:
        """The model's logprob of each token of each completion after its prompt (teacher-forced,
        log-softmax in float32), the distinct prompts of a batch prefilled once."""
        if len(prompts) != len(completions):
            raise ValueError(f"{len(prompts)} prompts for {len(completions)} completions")
        torch = _torch()
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                out: list[list[float]] = []
                for start in range(0, len(prompts), self.max_batch_size):
                    end = start + self.max_batch_size
                    out += self._score_batch(list(prompts[start:end]), list(completions[start:end]))
                return out
        finally:
            self.model.train(was_training)

    def _score_batch(
        self, prompts: list[Sequence[int]], completions: list[Sequence[int]]
    ) -> list[list[float]]:
        torch = _torch()
        device = self.model.device
        cache, last, attn, positions = self._prefill(prompts)
        width = max(len(c) for c in completions)
        if width == 0:
            return [[] for _ in completions]
        ids = torch.full((len(prompts), width), self._pad, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for b, comp in enumerate(completions):
            ids[b, : len(comp)] = torch.tensor(list(comp), dtype=torch.long)
            mask[b, : len(comp)] = 1
        out = self.model(
            input_ids=ids.to(device),
            attention_mask=torch.cat([attn, mask.to(device)], dim=1),
            position_ids=positions[:, -1:] + 1 + torch.arange(width, device=device),
            past_key_values=cache,
            use_cache=True,
        )
        # Token j is predicted by the position before it: the prompt's last one for j = 0.
        logits = torch.cat([last.unsqueeze(1), out.logits[:, :-1].float().cpu()], dim=1)
        picked = torch.log_softmax(logits, dim=-1).gather(2, ids.unsqueeze(2)).squeeze(2)
        return [picked[b, : len(c)].tolist() for b, c in enumerate(completions)]

    def _check(self, p: SamplingParams) -> None:
        if p.repetition_penalty != 1.0 or p.extra:
            raise ValueError(
                "TransformersSampler supports neither repetition_penalty nor extra parameters"
            )
        if p.stop and self.tokenizer is None:
            raise ValueError(
                "stop strings need the tokenizer: TransformersSampler(model, tokenizer)"
            )

    def _generators(self, plist: list[SamplingParams]) -> list[Any]:
        torch = _torch()
        gens = []
        for p in plist:
            # Unseeded prompts draw their seed from torch's global generator (torch.manual_seed
            # makes a run reproducible); seeded ones do not depend on anything else.
            seed = p.seed if p.seed is not None else int(torch.randint(0, 2**62, (1,)).item())
            gens.append(torch.Generator().manual_seed(int(seed)))
        return gens

    def _prefill(self, prompts: list[Sequence[int]]) -> tuple[Any, Any, Any, Any]:
        """One forward pass over the distinct prompts, its KV cache and last logits copied to
        every prompt: the samples of a group share their prompt's prefill."""
        torch = _torch()
        device = self.model.device
        if self.share_prefill:
            first: dict[tuple[int, ...], int] = {}
            which = [first.setdefault(tuple(p), len(first)) for p in prompts]
            unique = [list(p) for p in first]
        else:
            which, unique = list(range(len(prompts))), [list(p) for p in prompts]
        width = max(len(p) for p in unique)
        ids = torch.full((len(unique), width), self._pad, dtype=torch.long)
        attn = torch.zeros((len(unique), width), dtype=torch.long)
        for b, prompt in enumerate(unique):
            ids[b, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
            attn[b, width - len(prompt) :] = 1
        ids, attn = ids.to(device), attn.to(device)
        positions = (attn.cumsum(-1) - 1).clamp(min=0)
        out = self.model(
            input_ids=ids,
            attention_mask=attn,
            position_ids=positions,
            use_cache=True,
            logits_to_keep=1,
        )
        self.prefill_calls += 1
        self.prefill_tokens += int(attn.sum())
        index = torch.tensor(which, dtype=torch.long, device=device)
        if len(unique) < len(prompts):
            out.past_key_values.reorder_cache(index)  # index_select along the batch dimension
        return (
            out.past_key_values,
            out.logits[index, -1, :].float().cpu(),
            attn[index],
            positions[index],
        )

    def _sample_batch(
        self, prompts: list[Sequence[int]], plist: list[SamplingParams]
    ) -> list[SampleResult]:
        torch = _torch()
        device = self.model.device
        cache, logits, attn, positions = self._prefill(prompts)
        rows = [_Row(p, g) for p, g in zip(plist, self._generators(plist), strict=True)]
        steps = max(p.max_tokens for p in plist)
        for _ in range(steps):
            logp = torch.log_softmax(logits, dim=-1)  # one batched call, not one per row
            nxt = [row.step(logits[b], logp[b], self) for b, row in enumerate(rows)]
            if all(row.done for row in rows):
                break
            attn = torch.cat(
                [attn, torch.ones((len(rows), 1), dtype=torch.long, device=device)], dim=1
            )
            positions = positions[:, -1:] + 1
            out = self.model(
                input_ids=torch.tensor(nxt, dtype=torch.long, device=device).unsqueeze(1),
                attention_mask=attn,
                position_ids=positions,
                past_key_values=cache,
                use_cache=True,
            )
            cache = out.past_key_values
            logits = out.logits[:, -1, :].float().cpu()
        return [row.result() for row in rows]


class _Row:
    """One prompt's sampling state within a batch."""

    def __init__(self, params: SamplingParams, generator: Any) -> None:
        self.p = params
        self.gen = generator
        self.ids: list[int] = []
        self.logprobs: list[float] = []
        self.top: list[dict[int, float]] = []
        self.done = False
        self.finish = "length"

    def step(self, logits: Any, logp: Any, sampler: TransformersSampler) -> int:
        """Draw the next token from ``logits`` (float32, CPU; ``logp`` their log-softmax);
        returns the id to feed next."""
        if self.done:
            return sampler._pad
        torch = _torch()
        tok = self._draw(logits)
        self.ids.append(tok)
        self.logprobs.append(float(logp[tok]))
        if self.p.logprobs:
            values, index = torch.topk(logp, self.p.logprobs)
            self.top.append({int(i): float(v) for i, v in zip(index, values, strict=True)})
        if (
            tok in self.p.stop_token_ids
            or tok in sampler.eos_token_ids
            or self._stop_string(sampler)
        ):
            self.done, self.finish = True, "stop"
        elif len(self.ids) >= self.p.max_tokens:
            self.done = True
        return tok

    def _draw(self, logits: Any) -> int:
        torch = _torch()
        if self.p.temperature <= 0:
            return int(torch.argmax(logits))
        scores = logits / self.p.temperature
        if self.p.top_k > 0:
            kth = torch.topk(scores, min(self.p.top_k, scores.numel())).values[-1]
            scores = scores.masked_fill(scores < kth, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        if self.p.top_p < 1.0:
            sorted_p, order = torch.sort(probs, descending=True)
            # Keep the smallest set whose mass reaches top_p (the token crossing it included).
            drop = (sorted_p.cumsum(0) - sorted_p) >= self.p.top_p
            probs = probs.clone()
            probs[order[drop]] = 0.0
        return int(torch.multinomial(probs, 1, generator=self.gen))

    def _stop_string(self, sampler: TransformersSampler) -> bool:
        if not self.p.stop:
            return False
        text = sampler.tokenizer.decode(self.ids[-32:])
        return any(s in text for s in self.p.stop)

    def result(self) -> SampleResult:
        return SampleResult(
            list(self.ids),
            self.finish,  # type: ignore[arg-type]
            list(self.logprobs) if self.p.logprobs is not None else None,
            None,
            list(self.top) if self.p.logprobs else None,
        )
