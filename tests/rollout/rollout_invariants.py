"""Invariants every token-level trajectory must satisfy (shared by scripted and real-model tests)."""

from __future__ import annotations

from typing import Any

from verifiers_lite.rollout import IGNORE_INDEX, Template, training_view
from verifiers_lite.rollout.trajectory import STOP_REASONS, is_truncated


def unrolled(t: dict[str, Any]) -> tuple[list[int], list[int], list[float]]:
    """A trajectory's (ids, unshifted labels, sampled tokens' logprobs), from its row layout by
    hand: every id in order, the label where the mask says the model sampled it."""
    ids = t["prompt_ids"] + t["completion_ids"]
    labels = [IGNORE_INDEX] * len(t["prompt_ids"]) + [
        tok if m else IGNORE_INDEX
        for tok, m in zip(t["completion_ids"], t["completion_mask"], strict=True)
    ]
    sampled = [
        lp for lp, m in zip(t["completion_logprobs"], t["completion_mask"], strict=True) if m
    ]
    return ids, labels, sampled


def check_trajectory(
    t: dict[str, Any],
    template: Template,
    *,
    sampler_prompts: list[list[int]] | None = None,
    tools: list[dict[str, Any]] | None = None,
    cap: int | None = None,
    max_turns: int = 6,
    logprobs_asked: bool = True,
) -> None:
    """``logprobs_asked=False``: the sampler gave none, so every stored logprob is 0.0."""
    ids, labels, sampled_lps = unrolled(t)
    msgs = t["messages"]
    # The stored layout is the only one: the training view is derived from it, position by position.
    assert not {"input_ids", "labels", "logprobs", "attention_mask", "position_ids"} & t.keys()
    view = training_view(t)
    assert view["input_ids"] == ids and view["labels"] == labels
    assert view["attention_mask"] == [1] * len(ids) and view["position_ids"] == list(
        range(len(ids))
    )
    assert [
        lp for lp, lab in zip(view["logprobs"], labels, strict=True) if lab != IGNORE_INDEX
    ] == sampled_lps
    assert all(
        lp == 0.0 for lp, lab in zip(view["logprobs"], labels, strict=True) if lab == IGNORE_INDEX
    )
    assert t["stop_reason"] in STOP_REASONS
    assert t["truncated"] == is_truncated(t["stop_reason"])
    assert len(ids) == len(labels)
    if cap is not None:
        assert len(ids) <= cap
    # Labels equal ids on sampled tokens, -100 elsewhere; the prompt is never trainable.
    assert all(lab in (IGNORE_INDEX, i) for i, lab in zip(ids, labels, strict=True))
    assert all(lab == IGNORE_INDEX for lab in labels[: t["prompt_length"]])
    n_train = sum(lab != IGNORE_INDEX for lab in labels)
    assert len(t["completion_logprobs"]) == len(t["completion_ids"]) == len(t["completion_mask"])
    assert len(sampled_lps) == n_train and all(lp <= 0.0 for lp in sampled_lps)
    if not logprobs_asked:
        assert set(t["completion_logprobs"]) <= {0.0}
    # decode(input_ids) is the rendered conversation (a prefix of it when a limit cut it).
    rendered = template.render(msgs, tools, add_generation_prompt=False)
    decoded = template.decode(ids)
    assert rendered.startswith(decoded), (rendered, decoded)
    if cap is None and t["stop_reason"] in ("stop", "max_turns"):
        assert decoded == rendered
    assistants = [m for m in msgs if m["role"] == "assistant"]
    assert len(assistants) == t["turns"] <= max_turns
    # Every tool call answered by one tool message with its id (except a call cut by a limit).
    answered = [m["tool_call_id"] for m in msgs if m["role"] == "tool"]
    assert len(answered) == len(set(answered))
    for k, a in enumerate(assistants):
        for c in a.get("tool_calls", []):
            last = k == len(assistants) - 1
            assert c["id"] in answered or (last and t["stop_reason"] == "length"), c
    # The first prompt is the row's prompt_ids; bridge tokens carry no logprob.
    assert len(t["prompt_ids"]) == (t["prompt_length"] if ids else 0)
    assert all(
        lp == 0.0
        for lp, m in zip(t["completion_logprobs"], t["completion_mask"], strict=True)
        if not m
    )
    if sampler_prompts is not None:
        assert len(sampler_prompts) == t["turns"]
        assert (
            not sampler_prompts or t["prompt_ids"] == sampler_prompts[0]
        )  # the first prompt, as sampled
        for p in sampler_prompts:
            # Each prompt is exactly the ids accumulated so far, ending in a generation prompt.
            assert ids[: len(p)] == p
            assert labels[len(p) - 1] == IGNORE_INDEX
            if len(p) < len(ids):
                assert labels[len(p)] != IGNORE_INDEX
