"""The answer parsers: \\boxed{} extraction, ThinkParser, XMLParser and the plain Parser."""

from __future__ import annotations

import pytest

import verifiers_lite as vf


def test_parsers():
    assert vf.extract_boxed_answer(r"so \boxed{\frac{1}{2}} and \boxed{42}") == "42"
    assert vf.extract_boxed_answer(r"\boxed{a{b}c}") == "a{b}c"
    assert vf.extract_boxed_answer(r"\boxed{unclosed") is None
    assert vf.extract_boxed_answer("nothing") is None
    think = vf.ThinkParser(extract_fn=vf.extract_boxed_answer)
    assert think.parse(r"<think>maybe \boxed{1}</think> final \boxed{2}") == "2"
    assert think.get_format_reward_func()("<think>a</think> b") == 1.0
    assert think.get_format_reward_func()("no think") == 0.0
    xml = vf.XMLParser(["reasoning", ("answer", "result")])
    text = "<reasoning>r</reasoning>\n<result> 7 </result>"
    assert xml.parse_fields(text) == {"reasoning": "r", "answer": "7"}
    assert xml.parse_answer([{"role": "assistant", "content": text}]) == "7"
    assert xml.get_format_reward_func()("<reasoning>r</reasoning>") == 0.5
    assert xml.parse_answer("<answer>1</answer><answer>2</answer>") == "2"
    assert vf.Parser().parse_answer([{"role": "assistant", "content": "  hi "}]) == "hi"
    with pytest.raises(ValueError):
        vf.XMLParser([])
