"""Invariants every token-level trajectory must satisfy (shared by scripted and real-model tests)."""

from __future__ import annotations

from typing import Any

from verifiers_lite.rollout import IGNORE_INDEX, Template
from verifiers_lite.rollout.trajectory import STOP_REASONS, is_truncated


def check_trajectory(
    t: dict[str, Any],
    template: Template,
    *,
    sampler_prompts: list[list[int]] | None = None,
    tools: list[dict[str, Any]] | None = None,
    cap: int | None = None,
    max_turns: int = 6,
) -> None:
    ids, labels, msgs = t["input_ids"], t["labels"], t["messages"]
    assert t["stop_reason"] in STOP_REASONS
    assert t["truncated"] == is_truncated(t["stop_reason"])
    assert len(ids) == len(labels)
    if cap is not None:
        assert len(ids) <= cap
    # Labels equal ids on sampled tokens, -100 elsewhere; the prompt is never trainable.
    assert all(lab in (IGNORE_INDEX, i) for i, lab in zip(ids, labels, strict=True))
    assert all(lab == IGNORE_INDEX for lab in labels[: t["prompt_length"]])
    n_train = sum(lab != IGNORE_INDEX for lab in labels)
    if t["logprobs"] is not None:
        assert len(t["logprobs"]) == n_train
        assert all(lp <= 0.0 for lp in t["logprobs"])
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
    # The same ids laid out as an output row's (what build_training_batch reads).
    head = t["prompt_length"] if ids else 0
    assert t["prompt_ids"] + t["completion_ids"] == ids and len(t["prompt_ids"]) == head
    assert t["completion_mask"] == [int(lab != IGNORE_INDEX) for lab in labels[head:]]
    sampled_lps = [lp for lp, m in zip(t["completion_logprobs"], t["completion_mask"], strict=True) if m]
    assert sampled_lps == (t["logprobs"] if t["logprobs"] is not None else [0.0] * n_train)
    assert all(lp == 0.0 for lp, m in zip(t["completion_logprobs"], t["completion_mask"], strict=True) if not m)
    if sampler_prompts is not None:
        assert len(sampler_prompts) == t["turns"]
        assert not sampler_prompts or t["prompt_ids"] == sampler_prompts[0]  # the first prompt, as sampled
        for p in sampler_prompts:
            # Each prompt is exactly the ids accumulated so far, ending in a generation prompt.
            assert ids[: len(p)] == p
            assert labels[len(p) - 1] == IGNORE_INDEX
            if len(p) < len(ids):
                assert labels[len(p)] != IGNORE_INDEX
