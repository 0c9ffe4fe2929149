"""Train/inference mismatch: re-score sampled tokens with a trainer-side model and compare.

RL trainers weight each sampled token by ``exp(logp_trainer - logp_sampler)``; when the
inference engine and the trainer compute different probabilities for the same tokens (kernels,
quantisation, precision), those importance ratios drift from 1 even for on-policy data. This
module measures that drift per token.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .multi_turn import IGNORE_INDEX

__all__ = ["LogprobReport", "Scorer", "hf_scorer", "logprob_report"]

#: ``scorer(input_ids)`` returns ``len(input_ids)`` floats: entry ``i`` is
#: log p(input_ids[i] | input_ids[:i]) under the trainer's model (entry 0 is never used).
Scorer = Callable[[list[int]], Sequence[float]]


@dataclass
class LogprobReport:
    """Per-token sampler vs trainer logprobs of the sampled tokens, and their statistics.

    ``kl_k1`` = mean(logp_sampler - logp_trainer) and ``kl_k3`` = mean(r - 1 - log r) with
    ``r = exp(logp_trainer - logp_sampler)`` both estimate KL(sampler || trainer) from tokens
    drawn by the sampler (k3 is never negative and has lower variance). They are exact
    estimates when sampling ran at temperature 1 with no top-k/top-p.
    """

    name: str
    sampler_logprobs: list[float]
    trainer_logprobs: list[float]
    sequences: int
    ratio_bounds: tuple[float, float] = (0.8, 1.25)

    @property
    def tokens(self) -> int:
        return len(self.sampler_logprobs)

    def stats(self) -> dict[str, float]:
        """``tokens``, ``mean_abs_diff``, ``max_abs_diff``, ``kl_k1``, ``kl_k3``, ``ratio_mean``,
        ``ratio_min``, ``ratio_max`` and ``ratio_outside`` (fraction outside ``ratio_bounds``)."""
        import numpy as np

        s = np.asarray(self.sampler_logprobs, dtype=np.float64)
        t = np.asarray(self.trainer_logprobs, dtype=np.float64)
        if s.size == 0:
            return {"sequences": self.sequences, "tokens": 0}
        d = t - s
        r = np.exp(d)
        lo, hi = self.ratio_bounds
        return {
            "sequences": self.sequences,
            "tokens": int(s.size),
            "mean_abs_diff": float(np.abs(d).mean()),
            "max_abs_diff": float(np.abs(d).max()),
            "kl_k1": float((-d).mean()),
            "kl_k3": float((r - 1 - d).mean()),
            "ratio_mean": float(r.mean()),
            "ratio_min": float(r.min()),
            "ratio_max": float(r.max()),
            "ratio_outside": float(((r < lo) | (r > hi)).mean()),
        }

    def __str__(self) -> str:
        st = self.stats()
        if not st.get("tokens"):
            return f"{self.name}: no sampled tokens"
        lo, hi = self.ratio_bounds
        return (
            f"{self.name}: {st['tokens']} tokens in {st['sequences']} sequences | "
            f"|dlogp| mean {st['mean_abs_diff']:.3g} max {st['max_abs_diff']:.3g} | "
            f"KL k1 {st['kl_k1']:.2e} k3 {st['kl_k3']:.2e} | ratio mean {st['ratio_mean']:.4f} "
            f"min {st['ratio_min']:.4f} max {st['ratio_max']:.4f} "
            f"outside [{lo}, {hi}] {100 * st['ratio_outside']:.2f}%"
        )

    def plot(self, ax: Any = None) -> Any:
        """Scatter of trainer vs sampler logprob per token (matplotlib); returns the axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(4.5, 4.5))
        ax.scatter(self.sampler_logprobs, self.trainer_logprobs, s=6, alpha=0.5)
        low = min([0.0, *self.sampler_logprobs, *self.trainer_logprobs])
        ax.plot([low, 0], [low, 0], color="grey", lw=0.8)
        ax.set_xlabel("sampler logprob")
        ax.set_ylabel("trainer logprob")
        ax.set_title(self.name)
        return ax


def _as_batch(batch: Any) -> dict[str, Any]:
    if isinstance(batch, dict) and {"input_ids", "labels", "logprobs"} <= batch.keys():
        return batch
    if isinstance(batch, dict) or not isinstance(batch, Sequence):
        raise TypeError("batch must be a training batch dict or a list of rollout rows")
    from .training import build_training_batch

    return build_training_batch(batch)


def logprob_report(
    batch: Any,
    scorer: Scorer | Any,
    name: str = "sampler",
    ratio_bounds: tuple[float, float] = (0.8, 1.25),
) -> LogprobReport:
    """Re-score every sampled token of ``batch`` with ``scorer`` and compare with its sampler
    logprob.

    ``batch`` is an unshifted training batch (``build_training_batch`` /
    ``GenerateOutputs.to_training_batch``) or a list of rollout rows; rows need sampler
    logprobs. ``scorer`` is a :data:`Scorer` callable, or a ``transformers`` causal LM (or
    its path), wrapped with :func:`hf_scorer`.
    """
    b = _as_batch(batch)
    if not callable(scorer) or hasattr(scorer, "config"):
        scorer = hf_scorer(scorer)
    lengths = b.get("lengths") or [len(x) for x in b["input_ids"]]
    sampled: list[float] = []
    trained: list[float] = []
    sequences = 0
    for ids, labels, lps, n in zip(
        b["input_ids"], b["labels"], b["logprobs"], lengths, strict=True
    ):
        ids, labels, lps = list(ids[:n]), labels[:n], lps[:n]
        where = [i for i, lab in enumerate(labels) if lab != IGNORE_INDEX]
        if not where:
            continue
        if where[0] == 0:
            raise ValueError("a label on position 0: pass an unshifted batch")
        scores = scorer(ids)
        if len(scores) != len(ids):
            raise ValueError(f"scorer returned {len(scores)} values for {len(ids)} ids")
        sequences += 1
        sampled.extend(float(lps[i]) for i in where)
        trained.extend(float(scores[i]) for i in where)
    if any(math.isnan(x) for x in trained):
        raise ValueError("scorer returned NaN logprobs")
    return LogprobReport(name, sampled, trained, sequences, ratio_bounds)


def hf_scorer(model: Any, dtype: str = "float32") -> Scorer:
    """A :data:`Scorer` from a ``transformers`` causal LM object or checkpoint path, on CPU.

    One forward pass per sequence; log-softmax in float32.
    """
    import torch

    if isinstance(model, str) or not hasattr(model, "config"):
        from transformers import AutoModelForCausalLM

        model = AutoModelForCausalLM.from_pretrained(str(model), dtype=getattr(torch, dtype))
    model.eval()

    def score(ids: list[int]) -> list[float]:
        with torch.no_grad():
            x = torch.tensor([ids], dtype=torch.long, device=model.device)
            logits = model(input_ids=x).logits[0].float()
            lp = torch.log_softmax(logits[:-1], dim=-1)
            picked = lp.gather(1, x[0, 1:].unsqueeze(1)).squeeze(1)
        return [0.0, *picked.tolist()]

    return score
