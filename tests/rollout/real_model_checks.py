"""Checks run against a real tokenizer + sampler (llama.cpp in .venv, vLLM in .venv-vllm)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.rollout.rollout_invariants import check_trajectory
from verifiers_lite.rollout import MultiTurnRollout, SamplingParams, Template, ToolManager
from verifiers_lite.rollout.tool_manager import ParsedToolCall, ParseResult

# Text a user or a tool might send: unicode, whitespace, template-looking markup.
_piece = st.sampled_from(
    list("ab xyz019\n\t{}\"'<>|/_-é漢🙂") + ["<tool_call>", "<|im_end", "\n\n", "  ", "Hello"]
)
_text = st.lists(_piece, max_size=12).map("".join)


class CountingSampler:
    """Wraps a sampler to record each sample() call's prompts."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[list[list[int]]] = []

    def sample(self, prompts, params):  # type: ignore[no-untyped-def]
        self.calls.append([list(p) for p in prompts])
        return self.inner.sample(prompts, params)


class EveryTurnParser:
    """Treats every assistant turn as a call to ``note`` so real models exercise tool turns."""

    def parse(self, text: str, id_prefix: str | None = None) -> ParseResult:
        return ParseResult([ParsedToolCall(f"{id_prefix or 'c'}0", "note", '{"text": "ok"}')], text)


def note(text: str) -> str:
    """Take a note."""
    return f"noted: {text}"


def bridge_property(template: Template) -> None:
    """decode(prompt + sampled + bridge) renders the conversation, on random messages."""

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(user=_text, answer=_text, tool=_text, eot=st.booleans())
    def check(user: str, answer: str, tool: str, eot: bool) -> None:
        history = [{"role": "user", "content": user}]
        prompt = template.encode_messages(history)
        sampled = template.encode(answer) + ([template.stop_token_ids[0]] if eot else [])
        new = [{"role": "tool", "tool_call_id": "c0", "content": tool}]
        bridge = template.bridge_ids(history, new, sampled)
        full = [*history, {"role": "assistant", "content": answer}, *new]
        assert template.decode(prompt + sampled + bridge) == template.render(
            full, add_generation_prompt=True
        )
        closing = template.bridge_ids(history, [], sampled, add_generation_prompt=False)
        assert template.decode(prompt + sampled + closing) == template.render(full[:2])

    check()


def sampler_contract(sampler: Any, template: Template) -> None:
    """Ids verbatim with the stop token kept, logprobs per sampled token, seeds batch-independent."""
    a = template.encode_messages([{"role": "user", "content": "What is 2+3?"}])
    b = template.encode_messages([{"role": "user", "content": "Name a colour."}])
    p = SamplingParams(
        temperature=0.8, max_tokens=24, seed=7, logprobs=2, stop_token_ids=template.stop_token_ids
    )
    ra, rb = sampler.sample([a, b], p)
    (ra2,) = sampler.sample([a], p)
    assert ra.token_ids == ra2.token_ids  # same seed, different batch, same result
    for r in (ra, rb):
        assert r.finish_reason in ("stop", "length")
        assert len(r.logprobs) == len(r.token_ids) and all(lp <= 0 for lp in r.logprobs)
        if r.finish_reason == "stop":
            assert r.token_ids[-1] in template.stop_token_ids
        else:
            assert len(r.token_ids) == 24
    (rn,) = sampler.sample([a], p.replace(logprobs=None, max_tokens=3))
    assert rn.logprobs is None and len(rn.token_ids) <= 3


def rollout_properties(sampler: Any, template: Template, examples: int = 4) -> None:
    """MultiTurnRollout invariants with real sampling, forced tool turns and random caps."""

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        users=st.lists(_text, min_size=1, max_size=3),
        max_turns=st.integers(1, 3),
        cap=st.none() | st.integers(60, 160),
        logprobs=st.none() | st.integers(0, 3),
    )
    def check(users: list[str], max_turns: int, cap: int | None, logprobs: int | None) -> None:
        counting = CountingSampler(sampler)
        tm = ToolManager([note], parser=EveryTurnParser())  # type: ignore[arg-type]
        rollout = MultiTurnRollout(
            counting,
            template,
            tm,
            SamplingParams(temperature=0.7, max_tokens=12, seed=3, logprobs=logprobs),
            max_turns=max_turns,
            max_trajectory_tokens=cap,
        )
        inp = [{"messages": [{"role": "user", "content": u}]} for u in users]
        before = copy.deepcopy(inp)
        out = rollout(inp)
        assert inp == before and len(out) == len(inp)
        assert len(counting.calls) == max(t["turns"] for t in out)  # one sample() per turn
        for t in out:
            ids = t["prompt_ids"] + t["completion_ids"]
            # Active trajectories are sampled in order; find this one's prompt in each call.
            prompts = [
                next((p for p in c if ids[: len(p)] == p), []) for c in counting.calls[: t["turns"]]
            ]
            check_trajectory(
                t,
                template,
                sampler_prompts=prompts,
                tools=tm.schemas,
                cap=cap,
                max_turns=max_turns,
                logprobs_asked=logprobs is not None,
            )

    check()


def tool_use_with_real_model(sampler: Any, template: Template) -> None:
    """Hermes tool calling end to end; whatever the model writes, every call is answered."""

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    rollout = MultiTurnRollout(
        sampler,
        template,
        ToolManager([add]),
        SamplingParams(temperature=0.0, max_tokens=48, seed=0, logprobs=0),
        max_turns=2,
    )
    msgs = [
        {"role": "system", "content": "Use the add tool for arithmetic."},
        {"role": "user", "content": "What is 12+30? Call the tool."},
    ]
    (t,) = rollout([{"messages": msgs}])
    check_trajectory(t, template, tools=rollout.tool_manager.schemas, max_turns=2)


def batch_independence(sampler: Any, template: Template) -> None:
    """A trajectory's result does not depend on which others share its batches."""
    tm = ToolManager([note], parser=EveryTurnParser())  # type: ignore[arg-type]
    rollout = MultiTurnRollout(
        sampler,
        template,
        tm,
        SamplingParams(temperature=0.9, max_tokens=10, seed=11, logprobs=0),
        max_turns=2,
    )
    convs = [[{"role": "user", "content": q}] for q in ("Hi!", "Count to five.", "What is 7*6?")]
    together = rollout(convs)
    alone = [rollout([c])[0] for c in convs]
    for a, b in zip(together, alone, strict=True):
        assert (a["prompt_ids"], a["completion_ids"]) == (b["prompt_ids"], b["completion_ids"])
        assert a["completion_mask"] == b["completion_mask"]
        assert a["completion_logprobs"] == pytest_approx(b["completion_logprobs"])


def pytest_approx(values: list[float]) -> Any:
    import pytest

    return pytest.approx(values, abs=1e-4)
