"""The trainer's per-token logprob pass with each distinct prompt run once.

TRL's ``GRPOTrainer`` scores a batch by running every row, prompt and completion, through the
model; the rows of a GRPO group share their prompt, so most of that work (and of its backward
pass) is the same prompt repeated ``num_generations`` times. :func:`share_prompt_pass` makes the
pass run each distinct prompt once (its KV cache, with its autograd graph, copied to the rows
that share it) and then the completions on top of it: the same logprobs and entropies up to float
rounding, the same gradient (the copies' gradients add up in the shared prompt), with far fewer
tokens when prompts are long and completions short. The completions go through TRL's own fused
LM head, so temperature, logit scaling and the entropy are TRL's.
"""

from __future__ import annotations

from typing import Any

from verifiers_lite._util.extras import require

__all__ = ["share_prompt_pass"]


def share_prompt_pass(trainer: Any) -> None:
    """Replace ``trainer``'s per-token logprob pass (TRL 1.16's
    ``_get_per_token_logps_and_entropies``) with one that runs each distinct prompt once.

    Batches it cannot share fall back to TRL's pass: multimodal inputs, an MoE auxiliary loss,
    gradient checkpointing (which turns the KV cache off), no prompt shared by two rows.
    ``trainer.vf_prompt_tokens`` counts the prompt tokens the shared passes ran and
    ``trainer.vf_prompt_tokens_unshared`` those TRL's pass would have run for the same batches.
    """
    original = trainer._get_per_token_logps_and_entropies
    trainer.vf_prompt_tokens = 0
    trainer.vf_prompt_tokens_unshared = 0

    def per_token_logps(
        model: Any,
        input_ids: Any,
        attention_mask: Any,
        logits_to_keep: int,
        batch_size: int | None = None,
        compute_entropy: bool = False,
        compute_aux_loss: bool = False,
        **extra: Any,
    ) -> tuple[Any, Any, Any]:
        if compute_aux_loss or any(v is not None for v in extra.values()):
            args = (input_ids, attention_mask, logits_to_keep, batch_size, compute_entropy)
            return original(model, *args, compute_aux_loss, **extra)
        torch = require("torch", "share_prompt_pass", "train")
        batch_size = batch_size or input_ids.size(0)
        logps, entropies = [], []
        for start in range(0, input_ids.size(0), batch_size):
            ids = input_ids[start : start + batch_size]
            mask = attention_mask[start : start + batch_size]
            plan = _plan(model, ids, mask, logits_to_keep)
            if plan is None:
                lp, ent, _ = original(
                    model, ids, mask, logits_to_keep, None, compute_entropy, False, **extra
                )
            else:
                with trainer.accelerator.autocast():
                    lp, ent = _shared_pass(model, ids, mask, logits_to_keep, *plan)
                trainer.vf_prompt_tokens += plan[0].numel()
                trainer.vf_prompt_tokens_unshared += ids.size(0) * plan[0].size(1)
            logps.append(lp)
            entropies.append(ent)
        entropy = torch.cat(entropies, dim=0) if compute_entropy else None
        return torch.cat(logps, dim=0), entropy, None

    trainer._get_per_token_logps_and_entropies = per_token_logps


def _plan(model: Any, ids: Any, mask: Any, keep: int) -> tuple[Any, Any, Any] | None:
    """The distinct prompts (all but their last token, which goes with the completion so that
    it predicts the first completion token), their masks, and each row's prompt; None when the
    batch gains nothing or cannot be shared."""
    torch = require("torch", "share_prompt_pass", "train")
    cut = ids.size(1) - keep - 1
    if cut < 1 or _checkpointing(model):
        return None
    prefix = torch.cat([ids[:, :cut], mask[:, :cut]], dim=1)
    unique, which = torch.unique(prefix, dim=0, return_inverse=True)
    if unique.size(0) == ids.size(0) or not bool((unique[:, cut:] != 0).any(dim=1).all()):
        return None  # nothing shared, or a prefix of padding only
    return unique[:, :cut], unique[:, cut:], which


def _checkpointing(model: Any) -> bool:
    inner = model
    for _ in range(4):  # accelerate, PEFT and the model's own wrappers
        if getattr(inner, "is_gradient_checkpointing", False):
            return True
        inner = getattr(inner, "module", None) or getattr(inner, "base_model", None)
        if inner is None:
            break
    return False


def _shared_pass(
    model: Any, ids: Any, mask: Any, keep: int, prefix: Any, prefix_mask: Any, which: Any
) -> tuple[Any, Any]:
    """The completions' logprobs and entropies: the distinct prompts once, their cache copied to
    the rows, then each row's last prompt token and completion through TRL's fused head."""
    cut = prefix.size(1)
    out = model(input_ids=prefix, attention_mask=prefix_mask, use_cache=True, logits_to_keep=1)
    cache = out.past_key_values
    cache.reorder_cache(which)  # index_select along the batch: differentiable, grads add up
    tail = ids[:, cut:]
    labels = tail.masked_fill(mask[:, cut:] == 0, -100)
    res = model(
        input_ids=tail,
        attention_mask=mask,
        past_key_values=cache,
        labels=labels,
        fused_lm_head=True,
    )
    entropy = res.entropy[:, -keep:] if res.entropy is not None else None
    return res.log_probs[:, -keep:], entropy
