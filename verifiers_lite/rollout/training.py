"""From rollout rows to GRPO-ready token batches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .multi_turn import IGNORE_INDEX

__all__ = ["build_training_batch", "merge_turns"]


def merge_turns(
    turns: Sequence[tuple[Sequence[int], Sequence[int], Sequence[float] | None]],
) -> dict[str, Any]:
    """Join a multi-turn conversation's ``(prompt_ids, completion_ids, logprobs)`` per turn.

    Each turn's prompt must extend the previous prompt + completion (``TokenClient`` guarantees
    it); the extension is the bridge (tool turns, generation prompt) and gets mask 0. Returns
    ``prompt_ids`` (the first prompt), ``completion_ids``, ``completion_mask`` and
    ``completion_logprobs`` (0.0 on bridge tokens; None if any turn lacks logprobs).
    """
    if not turns:
        return {
            "prompt_ids": [],
            "completion_ids": [],
            "completion_mask": [],
            "completion_logprobs": None,
        }
    prompt0 = list(turns[0][0])
    seq = list(prompt0)
    ids: list[int] = []
    mask: list[int] = []
    lps: list[float] | None = []
    for prompt, completion, logprobs in turns:
        prompt = list(prompt)
        if prompt[: len(seq)] != seq:
            raise ValueError(
                "a turn's prompt does not extend the previous turn's ids (re-tokenised?)"
            )
        bridge = prompt[len(seq) :]
        ids += bridge + list(completion)
        mask += [0] * len(bridge) + [1] * len(completion)
        if logprobs is None or lps is None or len(logprobs) != len(completion):
            lps = None
        else:
            lps += [0.0] * len(bridge) + [float(x) for x in logprobs]
        seq = prompt + list(completion)
    return {
        "prompt_ids": prompt0,
        "completion_ids": ids,
        "completion_mask": mask,
        "completion_logprobs": lps,
    }


def _row_tokens(row: dict[str, Any]) -> tuple[list[int], list[int], list[float]]:
    """(input_ids, labels, per-position logprobs) for one output row."""
    if "prompt_ids" in row and row.get("completion_ids") is not None:
        prompt, comp = list(row["prompt_ids"] or []), list(row["completion_ids"])
        mask = list(row.get("completion_mask") or [1] * len(comp))
        if len(mask) != len(comp):
            raise ValueError("completion_mask and completion_ids differ in length")
        lps = row.get("completion_logprobs")
        comp_lps = (
            [float(x) for x in lps]
            if lps is not None and len(lps) == len(comp)
            else [0.0] * len(comp)
        )
        labels = [IGNORE_INDEX] * len(prompt) + [
            t if m else IGNORE_INDEX for t, m in zip(comp, mask, strict=True)
        ]
        logprobs = [0.0] * len(prompt) + [
            lp if m else 0.0 for lp, m in zip(comp_lps, mask, strict=True)
        ]
        return prompt + comp, labels, logprobs
    if "input_ids" in row and "labels" in row:
        # A MultiTurnRollout trajectory: logprobs are listed for trainable tokens only.
        ids, labels = list(row["input_ids"]), list(row["labels"])
        sampled_lps = iter(row.get("logprobs") or [])
        logprobs = [float(next(sampled_lps, 0.0)) if lab != IGNORE_INDEX else 0.0 for lab in labels]
        return ids, labels, logprobs
    raise KeyError("row needs prompt_ids/completion_ids(/completion_mask) or input_ids/labels")


def build_training_batch(
    rows: Sequence[dict[str, Any]], pad_to_longest: bool = False, pad_token_id: int = 0
) -> dict[str, Any]:
    """GRPO batch: ``input_ids``, ``labels`` (-100 on prompt, bridge and masked tokens),
    ``logprobs`` (sampling-time logprob per position, 0.0 where label is -100), ``advantages``
    (one float per row, 0.0 when missing) and ``attention_mask``.

    Rows are ``GenerateOutputs`` rows (``prompt_ids``, ``completion_ids``, ``completion_mask``,
    ``completion_logprobs``, ``advantage``) or ``MultiTurnRollout`` trajectories. Lists are
    ragged unless ``pad_to_longest`` (right padding: ``pad_token_id``, label -100, mask 0).
    """
    batch: dict[str, Any] = {
        "input_ids": [],
        "labels": [],
        "logprobs": [],
        "advantages": [],
        "attention_mask": [],
    }
    for row in rows:
        ids, labels, lps = _row_tokens(row)
        batch["input_ids"].append(ids)
        batch["labels"].append(labels)
        batch["logprobs"].append(lps)
        batch["attention_mask"].append([1] * len(ids))
        batch["advantages"].append(float(row.get("advantage") or 0.0))
    if pad_to_longest and rows:
        width = max(len(x) for x in batch["input_ids"])
        for key, fill in (
            ("input_ids", pad_token_id),
            ("labels", IGNORE_INDEX),
            ("logprobs", 0.0),
            ("attention_mask", 0),
        ):
            batch[key] = [x + [fill] * (width - len(x)) for x in batch[key]]
    return batch
