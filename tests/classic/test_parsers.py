"""Classic parsers and answer extractors, against values worked out by hand from verifiers
0.3.1's rules (which differ from verifiers_lite's own parsers)."""

from __future__ import annotations

import pytest

import verifiers_lite.classic as vf


def _reply(text):
    return [{"role": "assistant", "content": text}]


def test_xml_parser_reads_first_match_per_message_and_the_latest_message_with_the_answer():
    parser = vf.XMLParser(["think", ("answer", "final")])
    parsed = parser.parse("<think> a </think><answer>1</answer><answer>2</answer>")
    assert (parsed.think, parsed.answer, parsed.final) == ("a", "1", None)
    assert parser.parse("<answer>1</answer><answer>2</answer>", last=True).answer == "2"
    completion = (
        _reply("<answer>7</answer>") + [{"role": "user", "content": "?"}] + _reply("no tags")
    )
    assert parser.parse_answer(completion) == "7"  # the latest assistant message that has one
    assert (
        parser.parse_answer("<answer>1</answer> <answer>2</answer>") == "2"
    )  # a string: the last match
    assert (
        parser.get_format_str()
        == "<think>\n...\n</think>\n<[ answer | final ]>\n...\n</[ answer | final ]>"
    )
    assert parser.format(think="t", final="f") == "<think>\nt\n</think>\n<answer>\nf\n</answer>"
    with pytest.raises(ValueError, match="Duplicate field name"):
        vf.XMLParser(["a", ("a", "b")])


def test_xml_format_reward_weighs_fields_present_start_and_end():
    reward = vf.XMLParser(["think", "answer"]).get_format_reward_func()
    # both field sets, starts with <think>, ends with </answer>: 0.4 + 0.2 + 0.2 + 0.2
    assert reward(_reply("<think>x</think>\n<answer>y</answer>")) == pytest.approx(1.0)
    # only the answer field, not at the start: 0.4 * 1/2 + 0.2 (spacing) + 0.2 (ends right)
    assert reward(_reply("so <answer>y</answer>")) == pytest.approx(0.6)
    # no field at all: only the spacing share
    assert reward(_reply("plain")) == pytest.approx(0.2)
    # averaged over assistant messages
    assert reward(_reply("plain") + _reply("<think>x</think><answer>y</answer>")) == pytest.approx(
        0.6
    )
    assert reward([{"role": "user", "content": "q"}]) == 0.0


def test_think_parsers_and_the_base_parser():
    think = vf.ThinkParser(extract_fn=vf.extract_boxed_answer)
    assert think.parse("<think>r</think> so \\boxed{12}") == "12"
    assert think.parse("no think block \\boxed{12}") == ""  # nothing before a missing </think>
    assert vf.MaybeThinkParser().parse("no block, answer") == "no block, answer"
    assert vf.MaybeThinkParser().parse("<think>r</think> 5 ") == "5"
    fmt = think.get_format_reward_func()
    assert fmt(_reply("<think>r</think>ok") + _reply("missing")) == 0.5
    base = vf.Parser()
    assert (
        base.parse_answer(_reply(" spaced ")) == " spaced "
    )  # no stripping in the classic base parser
    assert base.parse_answer([{"role": "user", "content": "q"}]) is None
    assert base.get_format_reward_func()(_reply("")) == 1.0


def test_answer_extractors_and_prompts():
    assert vf.extract_boxed_answer("a \\boxed{x} b \\boxed{\\frac{1}{2}}") == "\\frac{1}{2}"
    assert vf.extract_boxed_answer("none") == "none"
    assert vf.extract_boxed_answer("none", strict=True) == ""
    assert vf.extract_boxed_answer("\\boxed{open", strict=False) == "\\boxed{open"
    assert vf.extract_hash_answer("work\n#### 1,234 ") == "1,234"
    assert vf.extract_hash_answer("no marker") == "no marker"
    assert (
        vf.BOXED_SYSTEM_PROMPT
        == "Please reason step by step, and put your final answer within \\boxed{}."
    )
