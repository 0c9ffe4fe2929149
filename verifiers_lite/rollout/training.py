"""From rollout rows to GRPO-ready token batches."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict, cast

from verifiers_lite.core.records import TOKEN_KEYS, Row, TokenFields, Trajectory
from verifiers_lite.core.state import extend_tokens

from .multi_turn import IGNORE_INDEX

__all__ = ["TrainingView", "build_training_batch", "merge_turns", "training_view"]


def merge_turns(
    turns: Sequence[tuple[Sequence[int], Sequence[int], Sequence[float] | None]],
) -> dict[str, Any]:
    """Join a multi-turn conversation's ``(prompt_ids, completion_ids, logprobs)`` per turn.

    Each turn's prompt must extend the previous prompt + completion (``TokenClient`` guarantees
    it); the extension is the bridge (tool turns, generation prompt) and gets mask 0. Returns
    ``prompt_ids`` (the first prompt), ``completion_ids``, ``completion_mask`` and
    ``completion_logprobs`` (0.0 on bridge tokens; None if any turn lacks logprobs).
    """
    merged: TokenFields | None = None
    for prompt, completion, logprobs in turns:
        merged = extend_tokens(merged, prompt, completion, logprobs)
    if merged is None:
        return {
            "prompt_ids": [],
            "completion_ids": [],
            "completion_mask": [],
            "completion_logprobs": None,
        }
    out: dict[str, Any] = dict(merged)
    if any(lps is None or len(lps) != len(c) for _, c, lps in turns):
        out["completion_logprobs"] = None
    return out


TRAINING_ROW_KEYS: tuple[str, ...] = (*TOKEN_KEYS, "advantage")
"""The fields of a row that :func:`build_training_batch` reads."""

_OLD_LAYOUT = ("input_ids", "labels")


def training_fields(row: Row) -> Row:
    """Only the fields of ``row`` that :func:`build_training_batch` reads."""
    fields: Mapping[str, Any] = row
    return cast(Row, {k: fields[k] for k in TRAINING_ROW_KEYS if k in fields})


def _row_tokens(row: Row | Trajectory, index: int) -> tuple[list[int], list[int], list[float]]:
    """(input_ids, labels, per-position logprobs) of row ``index``'s token fields."""
    if "prompt_ids" not in row or row.get("completion_ids") is None:
        has = [k for k in (*TOKEN_KEYS, *_OLD_LAYOUT) if k in row]
        hint = (
            " (input_ids/labels is the training view, not a row: MultiTurnRollout "
            "trajectories carry the row's token fields)"
            if all(k in row for k in _OLD_LAYOUT)
            else ""
        )
        raise KeyError(
            f"row {index}: a training row needs {'/'.join(TOKEN_KEYS)}; this one has "
            f"{'/'.join(has) or 'no token fields'}{hint}"
        )
    prompt, comp = list(row["prompt_ids"] or []), list(row["completion_ids"])
    mask = list(row.get("completion_mask") or [1] * len(comp))
    if len(mask) != len(comp):
        raise ValueError(f"row {index}: completion_mask and completion_ids differ in length")
    lps = row.get("completion_logprobs")
    comp_lps = (
        [float(x) for x in lps] if lps is not None and len(lps) == len(comp) else [0.0] * len(comp)
    )
    labels = [IGNORE_INDEX] * len(prompt) + [
        t if m else IGNORE_INDEX for t, m in zip(comp, mask, strict=True)
    ]
    logprobs = [0.0] * len(prompt) + [
        lp if m else 0.0 for lp, m in zip(comp_lps, mask, strict=True)
    ]
    return prompt + comp, labels, logprobs


def _shift(values: list[Any], fill: Any) -> list[Any]:
    """Next-token alignment: position i carries what position i+1 had."""
    return values[1:] + [fill] if values else []


def build_training_batch(
    rows: Sequence[Row | Trajectory],
    pad_to_longest: bool = False,
    pad_token_id: int = 0,
    *,
    max_length: int | None = None,
    truncation: Literal["error", "right"] = "error",
    shift_labels: bool = False,
) -> dict[str, Any]:
    """A GRPO batch from rollout rows, one list per row.

    Keys: ``input_ids``; ``labels`` (-100 on prompt, bridge, masked and pad tokens);
    ``logprobs`` (sampling-time logprob aligned with ``labels``, 0.0 where the label is -100);
    ``attention_mask`` (1 on real tokens, 0 on padding); ``position_ids`` (0, 1, ... on real
    tokens, 0 on padding); ``lengths`` (real tokens per row); ``truncated`` (row cut by
    ``max_length``); ``advantages`` (one float per row, 0.0 when missing).

    Label convention: by default labels are **unshifted**, as Hugging Face causal LMs expect
    (they shift inside the loss): ``labels[i] == input_ids[i]`` on a sampled token and
    ``logprobs[i]`` is log p(input_ids[i] | input_ids[:i]). With ``shift_labels=True`` they are
    next-token aligned for trainers that compare ``logits[:, i]`` with ``labels[:, i]``:
    ``labels[i]`` is the label of token i+1 (and ``logprobs[i]`` its logprob); the last position
    gets -100.

    Length: rows longer than ``max_length`` raise ValueError (``truncation="error"``, before any
    work) or keep their first ``max_length`` tokens (``truncation="right"``). Lists are ragged
    unless ``pad_to_longest`` (right padding with ``pad_token_id``, label -100, mask 0).

    Rows are ``GenerateOutputs`` rows or ``MultiTurnRollout`` trajectories: both carry the token
    fields ``prompt_ids``, ``completion_ids``, ``completion_mask``, ``completion_logprobs``
    (:class:`~verifiers_lite.core.records.TokenFields`), and rows an ``advantage``. A row without them
    is refused (KeyError naming the keys it has) before any work.
    """
    if truncation not in ("error", "right"):
        raise ValueError(f"truncation must be 'error' or 'right', got {truncation!r}")
    if max_length is not None and max_length < 1:
        raise ValueError(f"max_length must be >= 1, got {max_length}")
    tokens = [_row_tokens(row, i) for i, row in enumerate(rows)]
    if max_length is not None and truncation == "error":
        long = [(i, len(t[0])) for i, t in enumerate(tokens) if len(t[0]) > max_length]
        if long:
            raise ValueError(
                f"{len(long)} rows exceed max_length={max_length} (row, length): {long[:5]}; "
                "pass truncation='right' to cut them"
            )
    keys = ("input_ids", "labels", "logprobs", "attention_mask", "position_ids")
    batch: dict[str, Any] = {k: [] for k in (*keys, "lengths", "truncated", "advantages")}
    for row, (ids, labels, lps) in zip(rows, tokens, strict=True):
        cut = max_length is not None and len(ids) > max_length
        if cut:
            ids, labels, lps = ids[:max_length], labels[:max_length], lps[:max_length]
        if shift_labels:
            labels, lps = _shift(labels, IGNORE_INDEX), _shift(lps, 0.0)
        batch["input_ids"].append(ids)
        batch["labels"].append(labels)
        batch["logprobs"].append(lps)
        batch["attention_mask"].append([1] * len(ids))
        batch["position_ids"].append(list(range(len(ids))))
        batch["lengths"].append(len(ids))
        batch["truncated"].append(cut)
        fields: Mapping[str, Any] = row  # a trajectory has no advantage
        batch["advantages"].append(float(fields.get("advantage") or 0.0))
    if pad_to_longest and rows:
        width = max(batch["lengths"])
        fills = (pad_token_id, IGNORE_INDEX, 0.0, 0, 0)
        for key, fill in zip(keys, fills, strict=True):
            batch[key] = [x + [fill] * (width - len(x)) for x in batch[key]]
    return batch


class TrainingView(TypedDict):
    """One row's training fields: a row of :func:`build_training_batch`, unpadded."""

    input_ids: list[int]  #: prompt, then every later token (model turns and bridges)
    labels: list[int]  #: the token where the model sampled it, -100 elsewhere (unshifted)
    logprobs: list[float]  #: the sampled token's logprob at its position, 0.0 elsewhere
    attention_mask: list[int]  #: 1 per token
    position_ids: list[int]  #: 0, 1, ... per token


def training_view(row: Row | Trajectory) -> TrainingView:
    """The training fields of one row or ``MultiTurnRollout`` trajectory, derived from its token
    fields exactly as :func:`build_training_batch` lays out each row (unshifted, uncut)."""
    batch = build_training_batch([row])
    return {
        "input_ids": batch["input_ids"][0],
        "labels": batch["labels"][0],
        "logprobs": batch["logprobs"][0],
        "attention_mask": batch["attention_mask"][0],
        "position_ids": batch["position_ids"][0],
    }
