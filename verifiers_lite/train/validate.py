"""Check token rows before a trainer sees them: masks, labels, logprobs and turn prefixes.

Hand-offs from rollouts to trainers break silently: a mask one token short, logprobs shifted by
one position, a loss mask covering a tool answer, a turn whose prompt was re-tokenised. Each
check here names the row and the position where the data stop making sense.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.core.trajectory import expand_steps

__all__ = ["TrainingDataError", "TrainingIssue", "validate_training_rows"]

IGNORE_INDEX = -100  # the label of a token no loss is taken on (Hugging Face convention)

IssueKind = Literal["mask_length", "logprob_alignment", "label_on_unsampled", "prefix_break"]


@dataclass(frozen=True)
class TrainingIssue:
    """One fault: which row, which token position (in the row's ``where`` sequence), what."""

    row: int
    position: int
    kind: IssueKind
    where: str
    detail: str

    def __str__(self) -> str:
        return f"row {self.row}, {self.where} position {self.position}: {self.kind}: {self.detail}"


class TrainingDataError(VerifiersError, ValueError):
    """Rows that would train the wrong tokens; ``issues`` lists every fault found."""

    def __init__(self, issues: list[TrainingIssue]) -> None:
        self.issues = issues
        shown = "\n  ".join(str(i) for i in issues[:10])
        more = f"\n  ... and {len(issues) - 10} more" if len(issues) > 10 else ""
        super().__init__(f"{len(issues)} problem(s) in training rows:\n  {shown}{more}")


@dataclass
class _Sequence:
    """One row seen as prompt + completion with a per-completion-token mask and logprobs."""

    prompt: list[int]
    completion: list[int]
    mask: list[int] | None
    logprobs: list[float] | None
    where: str  # the completion's field name, for messages
    prompt_mask: list[int] | None = None
    turns: list[dict[str, Any]] = field(default_factory=list)


def validate_training_rows(rows: Any) -> int:
    """Check training rows; raise :class:`TrainingDataError` naming each fault, else return the
    number of rows checked.

    Accepted rows (recognised by their keys): result rows and rollout states
    (``prompt_ids``/``completion_ids``/``completion_mask``/``completion_logprobs``, prime-rl
    samples with ``prompt_mask`` too) and ``MultiTurnRollout`` trajectories; training views
    (``input_ids``/``labels``/``logprobs``: per position as ``training_view`` makes them, or one
    per sampled token); verl agent-loop outputs (``response_ids``/``response_mask``/
    ``response_logprobs``) and a SkyRL generator output (one dict of per-row lists).

    Faults: ``mask_length`` (a mask or label list not as long as its tokens),
    ``logprob_alignment`` (logprobs not one per sampled token: a count that differs, a logprob on
    a masked token, a value that is not a log-probability, or one that differs from the turn's
    sampler output), ``label_on_unsampled`` (a loss label on a prompt, tool or bridge token, or
    a label that is not the token at its position), ``prefix_break`` (a turn whose prompt does
    not extend the previous turn's prompt + completion; needs per-turn tokens, as a rollout
    state's ``trajectory`` steps carry them).
    """
    issues: list[TrainingIssue] = []
    seqs = _as_rows(rows)
    for i, row in enumerate(seqs):
        if not isinstance(row, Mapping):
            raise TypeError(f"row {i} is a {type(row).__name__}, not a dict")
        if "labels" in row and "input_ids" in row:
            issues += _check_labels(i, row)
            continue
        seq = _normalise(i, row)
        issues += _check_sequence(i, seq)
        if seq.turns:
            issues += _check_turns(i, seq)
    if issues:
        raise TrainingDataError(issues)
    return len(seqs)


def _as_rows(rows: Any) -> list[Any]:
    """A SkyRL generator output (dict of lists) becomes one dict per row; lists pass through."""
    if isinstance(rows, Mapping) and "prompt_token_ids" in rows:
        n = len(rows["prompt_token_ids"])
        logprobs = rows.get("rollout_logprobs")
        for key in ("response_ids", "loss_masks"):
            if len(rows.get(key) or []) != n:
                raise ValueError(
                    f"SkyRL output: {key} has {len(rows.get(key) or [])} rows, prompt_token_ids {n}"
                )
        return [
            {
                "prompt_token_ids": rows["prompt_token_ids"][i],
                "response_ids": rows["response_ids"][i],
                "loss_masks": rows["loss_masks"][i],
                "rollout_logprobs": None if logprobs is None else logprobs[i],
            }
            for i in range(n)
        ]
    if isinstance(rows, Mapping) or not isinstance(rows, Sequence):
        raise TypeError("rows must be a list of row dicts (or a SkyRL generator output dict)")
    return list(rows)


def _normalise(i: int, row: Mapping[str, Any]) -> _Sequence:
    if "response_ids" in row and "prompt_token_ids" in row:  # SkyRL
        return _Sequence(
            list(row["prompt_token_ids"]),
            list(row["response_ids"]),
            _list(row.get("loss_masks")),
            _list(row.get("rollout_logprobs")),
            "response_ids",
        )
    if "response_ids" in row:  # verl
        return _Sequence(
            list(row.get("prompt_ids") or []),
            list(row["response_ids"]),
            _list(row.get("response_mask")),
            _list(row.get("response_logprobs")),
            "response_ids",
        )
    if "completion_ids" in row:
        # A saved row keeps each turn's new prompt ids only: read them whole again.
        whole = expand_steps(row.get("prompt"), row.get("completion"), row.get("trajectory") or [])
        steps = [s["tokens"] for s in whole if s.get("tokens")]
        return _Sequence(
            list(row.get("prompt_ids") or []),
            list(row["completion_ids"]),
            _list(row.get("completion_mask")),
            _list(row.get("completion_logprobs")),
            "completion_ids",
            _list(row.get("prompt_mask")),
            steps,
        )
    raise KeyError(
        f"row {i} has no token fields: expected completion_ids, response_ids or input_ids/labels "
        f"(keys: {sorted(row)[:12]})"
    )


def _list(x: Any) -> Any:
    return None if x is None else list(x)


def _issue(i: int, pos: int, kind: IssueKind, where: str, detail: str) -> TrainingIssue:
    return TrainingIssue(i, pos, kind, where, detail)


def _check_sequence(i: int, s: _Sequence) -> list[TrainingIssue]:
    out: list[TrainingIssue] = []
    n = len(s.completion)
    if s.prompt_mask is not None:
        if len(s.prompt_mask) != len(s.prompt):
            out.append(
                _issue(
                    i,
                    min(len(s.prompt_mask), len(s.prompt)),
                    "mask_length",
                    "prompt_ids",
                    f"prompt_mask has {len(s.prompt_mask)} entries for {len(s.prompt)} prompt tokens",
                )
            )
        else:
            out += [
                _issue(
                    i,
                    p,
                    "label_on_unsampled",
                    "prompt_ids",
                    "prompt_mask marks a prompt token for the loss",
                )
                for p, m in enumerate(s.prompt_mask)
                if m
            ][:1]
    mask = s.mask if s.mask is not None else [1] * n
    if len(mask) != n:
        out.append(
            _issue(
                i,
                min(len(mask), n),
                "mask_length",
                s.where,
                f"mask has {len(mask)} entries for {n} tokens",
            )
        )
        return out
    if s.logprobs is None:
        return out
    if len(s.logprobs) != n:
        out.append(
            _issue(
                i,
                min(len(s.logprobs), n),
                "logprob_alignment",
                s.where,
                f"{len(s.logprobs)} logprobs for {n} tokens",
            )
        )
        return out
    for p, (lp, m) in enumerate(zip(s.logprobs, mask, strict=True)):
        if lp is None or not math.isfinite(lp) or lp > 1e-6:
            out.append(
                _issue(i, p, "logprob_alignment", s.where, f"{lp!r} is not a log-probability")
            )
            break
        if not m and lp != 0.0:
            out.append(
                _issue(
                    i,
                    p,
                    "logprob_alignment",
                    s.where,
                    f"logprob {lp:.4g} on a token outside the mask: logprobs are not aligned "
                    "with the sampled tokens",
                )
            )
            break
    return out


def _check_turns(i: int, s: _Sequence) -> list[TrainingIssue]:
    """Per-turn tokens: each prompt extends the last; the merged mask is 1 exactly on sampled ids."""
    out: list[TrainingIssue] = []
    seen: list[int] = []
    expected_mask: list[int] = []
    expected_lps: list[float | None] = []
    for t, turn in enumerate(s.turns):
        prompt = list(turn.get("prompt_ids") or [])
        sampled = list(turn.get("completion_ids") or [])
        lps = turn.get("completion_logprobs")
        if prompt[: len(seen)] != seen:
            pos = next(
                (p for p, (a, b) in enumerate(zip(prompt, seen, strict=False)) if a != b),
                min(len(prompt), len(seen)),
            )
            out.append(
                _issue(
                    i,
                    pos,
                    "prefix_break",
                    f"turn {t} prompt_ids",
                    f"turn {t}'s prompt does not extend turn {t - 1}'s prompt + completion "
                    f"(token {prompt[pos] if pos < len(prompt) else 'missing'} where "
                    f"{seen[pos] if pos < len(seen) else 'nothing'} was)",
                )
            )
            return out
        bridge = len(prompt) - len(seen) if t else 0
        expected_mask += [0] * bridge + [1] * len(sampled)
        expected_lps += [None] * bridge + (list(lps) if lps is not None else [None] * len(sampled))
        seen = prompt + sampled
    if len(s.prompt) + len(s.completion) != len(seen) or s.mask is None:
        return out  # the merged fields cover something else (or nothing): nothing to compare
    for pos, (m, e) in enumerate(zip(s.mask, expected_mask, strict=True)):
        if m and not e:
            out.append(
                _issue(
                    i,
                    pos,
                    "label_on_unsampled",
                    s.where,
                    f"mask 1 on token {s.completion[pos]}, which the environment wrote "
                    "between turns (a tool answer or template bridge)",
                )
            )
            break
    if s.logprobs is not None and len(s.logprobs) == len(expected_lps):
        for pos, (lp, want) in enumerate(zip(s.logprobs, expected_lps, strict=True)):
            if want is not None and abs(lp - want) > 1e-6:
                out.append(
                    _issue(
                        i,
                        pos,
                        "logprob_alignment",
                        s.where,
                        f"logprob {lp:.4g} where the sampler returned {want:.4g}",
                    )
                )
                break
    return out


def _check_labels(i: int, row: Mapping[str, Any]) -> list[TrainingIssue]:
    """A token-engine trajectory: unshifted labels (label == token where sampled, else -100)."""
    ids, labels = list(row["input_ids"]), list(row["labels"])
    if len(labels) != len(ids):
        return [
            _issue(
                i,
                min(len(labels), len(ids)),
                "mask_length",
                "labels",
                f"{len(labels)} labels for {len(ids)} input_ids",
            )
        ]
    attn = row.get("attention_mask")
    if attn is not None and len(attn) != len(ids):
        return [
            _issue(
                i,
                min(len(attn), len(ids)),
                "mask_length",
                "attention_mask",
                f"{len(attn)} attention_mask entries for {len(ids)} input_ids",
            )
        ]
    prompt_length = int(row.get("prompt_length") or 0)
    for p, (tok, lab) in enumerate(zip(ids, labels, strict=True)):
        if lab == IGNORE_INDEX:
            continue
        if p < prompt_length or lab != tok:
            why = (
                "a prompt token"
                if p < prompt_length
                else f"label {lab} is not the token there ({tok})"
            )
            return [_issue(i, p, "label_on_unsampled", "labels", f"label on {why}")]
    lps = row.get("logprobs")
    n_labels = sum(lab != IGNORE_INDEX for lab in labels)
    if lps is not None and len(lps) == len(ids) != n_labels:  # per position: 0.0 off labels
        for p, (lp, lab) in enumerate(zip(lps, labels, strict=True)):
            if lab == IGNORE_INDEX and lp != 0.0:
                return [
                    _issue(
                        i,
                        p,
                        "logprob_alignment",
                        "logprobs",
                        f"logprob {lp:.4g} on an unlabelled token",
                    )
                ]
    elif lps is not None and len(lps) != n_labels:
        return [
            _issue(
                i,
                min(len(lps), n_labels),
                "logprob_alignment",
                "logprobs",
                f"{len(lps)} logprobs for {n_labels} sampled tokens or {len(ids)} positions",
            )
        ]
    return []
