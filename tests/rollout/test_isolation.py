"""One trajectory's failure never takes the batch down (scripted sampler, toy ChatML tokenizer)."""

from __future__ import annotations

import json
import logging

from tests.rollout.rollout_invariants import check_trajectory, unrolled
from verifiers_lite.core.errors import ModelAPIError
from verifiers_lite.rollout import MultiTurnRollout, SamplingParams, Template, ToolManager
from verifiers_lite.rollout.sampling import SampleResult, sample_isolated
from verifiers_lite.rollout.testing import CHATML, ScriptedSampler, toy_template


def _without_traceback(error: dict) -> dict:
    """The error record less its traceback (kept from the author's frames; checked elsewhere)."""
    return {k: v for k, v in error.items() if k not in ("traceback", "traceback_id")}


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def answer(prompt: str) -> str:
    return "fine"


class Picky:
    """A sampler that raises on any batch holding a prompt that decodes to text with 'boom'."""

    def __init__(
        self,
        inner: ScriptedSampler,
        max_context_tokens: int | None = None,
        exc: Exception | None = None,
    ) -> None:
        self.inner = inner
        self.exc = exc or RuntimeError("kernel exploded")
        self.template = inner.template
        self.calls = 0
        if max_context_tokens is not None:
            self.max_context_tokens = max_context_tokens

    def sample(self, prompts, params):  # type: ignore[no-untyped-def]
        self.calls += 1
        if any("boom" in self.template.decode(p) for p in prompts):
            raise self.exc
        return self.inner.sample(prompts, params)


def convo(q: str) -> dict:
    return {"messages": [{"role": "user", "content": q}], "id": q}


def test_sampler_error_fails_only_its_trajectory(caplog) -> None:
    template = toy_template()
    sampler = Picky(ScriptedSampler(template, answer))
    rollout = MultiTurnRollout(sampler, template, sampling_params=SamplingParams(logprobs=0))
    with caplog.at_level(logging.WARNING):
        out = rollout([convo("a"), convo("boom"), convo("c")])
    assert [t["stop_reason"] for t in out] == ["stop", "error", "stop"]
    bad = out[1]
    # A sampler's own bug is not the model's failure: categorize() makes it env_error.
    assert _without_traceback(bad["error"]) == {
        "category": "env_error",
        "message": "sampler failed: RuntimeError: kernel exploded",
    }
    assert bad["turns"] == 0 and not bad["truncated"]
    assert bad["messages"] == [{"role": "user", "content": "boom"}]
    # What was built before the failure is kept, nothing of it trainable.
    assert bad["prompt_ids"] == template.encode_messages(bad["messages"])
    assert bad["completion_ids"] == bad["completion_mask"] == bad["completion_logprobs"] == []
    for t in (out[0], out[2]):
        assert t["error"] is None and t["messages"][-1]["content"] == "fine"
        check_trajectory(t, template)
    assert "kernel exploded" in caplog.text and "env_error" in caplog.text


def test_sampler_model_error_keeps_its_category() -> None:
    template = toy_template()
    gone = ModelAPIError("HTTP 503 from http://127.0.0.1:1/v1: overloaded", status=503)
    rollout = MultiTurnRollout(Picky(ScriptedSampler(template, answer), exc=gone), template)
    out = rollout([convo("boom"), convo("b")])
    assert out[0]["stop_reason"] == "error"
    assert _without_traceback(out[0]["error"]) == {
        "category": "model_http_error",
        "message": "sampler failed: ModelAPIError: HTTP 503 from http://127.0.0.1:1/v1: overloaded",
    }
    assert out[1]["error"] is None and out[1]["stop_reason"] == "stop"
    check_trajectory(out[1], template)


def test_template_that_cannot_render_fails_only_its_trajectory() -> None:
    # A chat template that refuses a conversation, as real ones do (e.g. roles out of order).
    strict = (
        "{% if messages[0]['role'] == 'assistant' %}"
        "{{ raise_exception('Conversation must start with a user or system message') }}{% endif %}"
        + CHATML
    )
    toy = toy_template()
    template = Template(strict, toy.encode, toy.decode, stop_token_ids=[2], eos_token="<|im_end|>")
    rollout = MultiTurnRollout(ScriptedSampler(template, answer), template)
    bad_convo = {
        "messages": [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "q"}]
    }
    good, bad, good2 = rollout([convo("a"), bad_convo, convo("c")])
    assert bad["stop_reason"] == "error" and bad["turns"] == 0
    assert bad["prompt_ids"] == bad["completion_ids"] == [] and bad["prompt_length"] == 0
    assert _without_traceback(bad["error"]) == {
        "category": "env_error",
        "message": "prompt could not be rendered: ValueError: "
        "Conversation must start with a user or system message",
    }
    for t in (good, good2):
        assert t["error"] is None and t["messages"][-1]["content"] == "fine"
        check_trajectory(t, template)


def test_prompt_too_long_is_refused_not_cut() -> None:
    template = toy_template()
    long_q = "x" * 80
    rollout = MultiTurnRollout(
        ScriptedSampler(template, answer), template, max_trajectory_tokens=60
    )
    short, long = rollout([convo("hi"), convo(long_q)])
    n = len(template.encode_messages([{"role": "user", "content": long_q}]))
    assert n > 60  # the prompt alone is over the cap
    assert long["stop_reason"] == "error" and long["prompt_length"] == n
    assert _without_traceback(long["error"]) == {
        "category": "prompt_too_long",
        "message": f"prompt of {n} tokens leaves no room to sample (max_trajectory_tokens=60)",
    }
    assert short["error"] is None
    assert long["prompt_ids"] == long["completion_ids"] == []
    assert short["stop_reason"] == "stop" and len(unrolled(short)[0]) <= 60
    check_trajectory(short, template, cap=60)


def test_prompt_filling_the_cap_exactly_is_refused() -> None:
    template = toy_template()
    n = len(template.encode_messages([{"role": "user", "content": "hello"}]))
    for cap, reason in ((n, "error"), (n + 1, "length")):
        rollout = MultiTurnRollout(
            ScriptedSampler(template, answer), template, max_trajectory_tokens=cap
        )
        (t,) = rollout([convo("hello")])
        assert t["stop_reason"] == reason, cap
        if reason == "length":  # one token of room: one sampled token
            ids, labels, _ = unrolled(t)
            assert sum(lab != -100 for lab in labels) == 1 and len(ids) == cap


def test_sampler_context_window_refuses_and_caps() -> None:
    template = toy_template()
    inner = ScriptedSampler(template, lambda p: "y" * 50)
    sampler = Picky(inner, max_context_tokens=40)
    rollout = MultiTurnRollout(sampler, template)
    short, long = rollout([convo("hi"), convo("z" * 40)])
    assert long["stop_reason"] == "error" and long["error"]["category"] == "prompt_too_long"
    assert "sampler context=40" in long["error"]["message"] and short["error"] is None
    # The short one was capped by the context window: max_tokens shrank to the room left.
    assert short["stop_reason"] == "length" and len(unrolled(short)[0]) == 40


def test_tool_dispatch_failure_fails_only_its_trajectory() -> None:
    template = toy_template()

    class BrokenManager(ToolManager):
        async def dispatch_async(self, calls):  # type: ignore[no-untyped-def]
            raise OSError("tool host gone")

    def respond(prompt: str) -> str:
        if "<|im_start|>tool" in prompt:
            return "done"
        return '<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>'

    rollout = MultiTurnRollout(ScriptedSampler(template, respond), template)
    ok_tm, bad_tm = ToolManager([add]), BrokenManager([add])
    good, bad = rollout([convo("a"), convo("b")], tool_manager=[ok_tm, bad_tm])
    assert good["stop_reason"] == "stop" and good["turns"] == 2
    assert bad["stop_reason"] == "error"
    assert _without_traceback(bad["error"]) == {
        "category": "env_error",
        "message": "tool turn 1 failed: OSError: tool host gone",
    }
    assert good["error"] is None
    check_trajectory(good, template, tools=ok_tm.schemas)


def test_missing_logprobs_fail_only_that_trajectory() -> None:
    template = toy_template()
    inner = ScriptedSampler(template, answer)

    class DropsSome:
        def sample(self, prompts, params):  # type: ignore[no-untyped-def]
            res = inner.sample(prompts, params)
            return [
                SampleResult(r.token_ids, r.finish_reason, None)
                if "drop" in template.decode(p)
                else r
                for p, r in zip(prompts, res, strict=True)
            ]

    rollout = MultiTurnRollout(DropsSome(), template, sampling_params=SamplingParams(logprobs=0))
    a, b = rollout([convo("keep"), convo("drop")])
    assert a["stop_reason"] == "stop"
    check_trajectory(a, template)
    assert b["stop_reason"] == "error" and a["error"] is None
    assert _without_traceback(b["error"]) == {
        "category": "model_bad_response",
        # "fine" and the end-of-turn token, one id per character in the toy tokenizer
        "message": "turn 1 failed: ModelAPIError: sampler returned None logprobs for 5 sampled tokens",
    }


def test_trace_failures_are_logged_and_counted_never_raised(tmp_path, caplog) -> None:
    template = toy_template()

    def callback(t: dict) -> bool:
        if t["id"] == "b":
            raise ValueError("callback bug")
        return True

    rollout = MultiTurnRollout(
        ScriptedSampler(template, answer), template, trace_dir=tmp_path, trace_callback=callback
    )
    with caplog.at_level(logging.WARNING):
        out = rollout([convo("a"), convo("b"), convo("c")])
    assert [t["stop_reason"] for t in out] == ["stop"] * 3
    assert rollout.trace_errors == 1 and "callback bug" in caplog.text
    files = sorted(tmp_path.iterdir())
    assert sorted(json.loads(f.read_text())["id"] for f in files) == ["a", "c"]

    blocker = tmp_path / "not_a_dir"
    blocker.write_text("a file where the trace directory should be")
    rollout2 = MultiTurnRollout(ScriptedSampler(template, answer), template, trace_dir=blocker)
    out2 = rollout2([convo("a"), convo("b")])
    assert [t["stop_reason"] for t in out2] == ["stop", "stop"]
    assert rollout2.trace_errors == 2


def test_sample_isolated_resamples_prompt_by_prompt() -> None:
    template = toy_template()
    sampler = Picky(ScriptedSampler(template, answer))
    prompts = [template.encode(q) for q in ("one", "boom", "three")]
    p = [SamplingParams()] * 3
    res = sample_isolated(sampler, prompts, p)
    assert isinstance(res[1], RuntimeError)
    assert [template.decode(r.token_ids) for r in (res[0], res[2])] == ["fine<|im_end|>"] * 2
    assert sampler.calls == 4  # the failed batch, then each prompt alone
    assert sample_isolated(sampler, prompts[:1], p[:1])[0].token_ids  # type: ignore[union-attr]
    assert sampler.calls == 5  # a healthy batch is one call
