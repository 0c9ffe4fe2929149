"""A thinking model's reasoning, end to end: read from either field name or inline, kept on the
message apart from the answer, counted, never scored, and sent back as the history option says
(checked on what the fake server received, request by request)."""

from __future__ import annotations

import html

import pytest

import verifiers_lite as vf
from tests.helpers.fake_model import calculator, expected_reasoning

QUESTIONS = [
    {"question": "What is 3 + 4?", "answer": "7"},
    {"question": "What is 5 * 6?", "answer": "30"},
]


def boxed_answer(completion, answer, parser) -> float:
    return float(parser.parse_answer(completion) == answer)


def tool_env(parser: vf.Parser | None = None, **kwargs) -> vf.ToolEnv:
    parser = parser or vf.ThinkParser(vf.extract_boxed_answer)
    return vf.ToolEnv(
        tools=[calculator],
        dataset=QUESTIONS,
        parser=parser,
        rubric=vf.Rubric([boxed_answer], parser=parser),
        **kwargs,
    )


@pytest.mark.parametrize("model", ["fake-think", "fake-think-reasoning", "fake-think-inline"])
def test_reasoning_is_kept_apart_from_the_answer_counted_and_never_scored(fake_server, model):
    from verifiers_lite.cli.report import format_table, run_summary
    from verifiers_lite.core.summary import token_line

    out = tool_env().evaluate_sync(vf.ChatClient(fake_server.base_url), model, progress=False)
    expected = [expected_reasoning(3, "+", 4), expected_reasoning(5, "*", 6)]
    for row, thoughts in zip(out.rows, expected, strict=True):
        replies = [m for m in row["completion"] if m["role"] == "assistant"]
        assert [
            m.get("reasoning_content") for m in replies
        ] == thoughts  # one place, whatever the source
        assert all("reasoning" not in m and "think>" not in (m["content"] or "") for m in replies)
        # The reasoning's own \boxed{} is one off: the reward reads the answer only.
        assert row["reward"] == 1.0
        words = sum(len(t.split()) for t in thoughts)
        if model == "fake-think-inline":  # an inline thinker reports no reasoning tokens
            assert "reasoning_tokens" not in row["usage"]
        else:
            assert row["usage"]["reasoning_tokens"] == words
    df = out.to_pandas()
    assert df["reasoning_text"].tolist() == ["\n\n".join(t) for t in expected]
    assert df.columns.get_loc("reasoning_text") == df.columns.get_loc("completion_text") + 1
    total = sum(len(t.split()) for thoughts in expected for t in thoughts)
    if model != "fake-think-inline":
        assert df["reasoning_tokens"].tolist() == [
            sum(len(t.split()) for t in th) for th in expected
        ]
        assert out.summary["reasoning_tokens"] == total
        assert token_line(out.summary).endswith(f" completion ({total} reasoning)")
        assert f"({total} reasoning)" in out._repr_html_()
        table = format_table(run_summary(list(out.rows), 1, 1.0), "run", {})
        assert f"of which reasoning {total:,}" in table
    # The notebook's table shows the last turn's reasoning collapsed above its answer.
    page = out._repr_html_()
    assert page.count(">reasoning</summary>") == 2
    assert html.escape(expected[0][1]) in page and "The answer is \\boxed{7}." in page


def test_a_model_without_reasoning_gets_no_reasoning_column_values(fake_server):
    from verifiers_lite.core.summary import token_line

    out = tool_env().evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-tool", progress=False)
    df = out.to_pandas()
    assert df["reasoning_text"].isna().all() and "reasoning_tokens" not in out.rows[0]["usage"]
    assert token_line(out.summary).endswith(" completion")


class TwoQuestions(vf.ToolEnv):
    """Two user turns, each answered through the calculator: four model requests."""

    async def is_completed(self, messages, state):
        answers = [m for m in messages if m["role"] == "assistant" and not m.get("tool_calls")]
        if not messages[-1].get("tool_calls") and len(answers) == 2:
            state["stop_reason"] = "stop"
            return True
        return False

    async def env_response(self, messages, state):
        if messages[-1].get("tool_calls"):
            return await super().env_response(messages, state)
        return [{"role": "user", "content": "And what is 6 * 7?"}]


# Per request, the reasoning each assistant message carried back (None: none), by hand:
# request 1 [user]; 2 [user, a1, tool]; 3 [user, a1, tool, a2, user]; 4 [..., user, a3, tool].
A1, A2, A3 = (
    expected_reasoning(3, "+", 4)[0],
    expected_reasoning(3, "+", 4)[1],
    expected_reasoning(6, "*", 7)[0],
)
SENT_BACK = {
    "keep": [[], [A1], [A1, A2], [A1, A2, A3]],
    "since_last_user": [[], [A1], [None, None], [None, None, A3]],
    "strip": [[], [None], [None, None], [None, None, None]],
}


@pytest.mark.parametrize("model", ["fake-think", "fake-think-reasoning"])
@pytest.mark.parametrize("history", list(SENT_BACK))
def test_each_history_option_sends_back_what_it_says(fake_server, model, history):
    env = TwoQuestions(
        tools=[calculator], dataset=QUESTIONS[:1], reasoning_history=history, max_turns=8
    )
    out = env.evaluate_sync(vf.ChatClient(fake_server.base_url), model, progress=False)
    (row,) = out.rows
    assert row["error"] is None and row["turns"] == 4
    sent = [
        [m.get("reasoning_content") for m in r["messages"] if m["role"] == "assistant"]
        for r in fake_server.requests()
    ]
    assert sent == SENT_BACK[history]
    assert all("reasoning" not in m for r in fake_server.requests() for m in r["messages"])
    # Whatever went back, the row keeps every turn's reasoning.
    kept = [m.get("reasoning_content") for m in row["completion"] if m["role"] == "assistant"]
    assert kept == [A1, A2, A3, expected_reasoning(6, "*", 7)[1]]


def test_a_bad_history_option_is_refused_when_the_environment_is_made():
    with pytest.raises(
        ValueError, match="reasoning_history must be one of 'keep', 'since_last_user', 'strip'"
    ):
        tool_env(reasoning_history="last")


def test_parsers_score_the_answer_not_a_reasoning_that_holds_another_answer():
    # The reasoning holds a different boxed answer and answer tag; the content holds the answer.
    reply = {
        "content": "<answer>5</answer> so \\boxed{5}",
        "reasoning": "<answer>9</answer> maybe \\boxed{9}?",
    }
    completion_of = {}
    for name, parser in {
        "think": vf.ThinkParser(vf.extract_boxed_answer),
        "xml": vf.XMLParser(["answer"]),
        "plain": vf.Parser(),
    }.items():
        env = vf.SingleTurnEnv(
            dataset=[{"question": "q", "answer": "5"}],
            parser=parser,
            rubric=vf.Rubric([boxed_answer], parser=parser),
        )
        (row,) = env.evaluate_sync(vf.ScriptedClient(reply), "m", progress=False).rows
        completion_of[name] = row["completion"]
        assert row["completion"][-1]["reasoning_content"] == reply["reasoning"]
        expected = {"think": "5", "xml": "5", "plain": reply["content"]}[name]
        assert parser.parse_answer(row["completion"]) == expected
    assert vf.extract_boxed_answer(completion_of["plain"][-1]["content"]) == "5"


def test_think_format_reward_sees_reasoning_kept_apart(fake_server):
    parser = vf.ThinkParser(vf.extract_boxed_answer)
    fmt = parser.get_format_reward_func()
    out = tool_env(parser).evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-think-inline", progress=False
    )
    assert [fmt(r["completion"]) for r in out.rows] == [1.0, 1.0]
    assert fmt([{"role": "assistant", "content": "no thinking here"}]) == 0.0
    assert fmt("<think>a</think>b") == 1.0 and fmt("<think>a</think>") == 0.0


def test_token_ids_stay_verbatim_when_inline_reasoning_is_moved_out_of_content():
    from verifiers_lite.rollout.testing import ScriptedSampler, toy_template

    class Again(vf.MultiTurnEnv):
        async def env_response(self, messages, state):
            return [{"role": "user", "content": "again"}]

    template = toy_template()
    sampler = ScriptedSampler(template, lambda prompt: "<think>hmm</think>\\boxed{7}")
    parser = vf.ThinkParser(vf.extract_boxed_answer)
    env = Again(
        dataset=QUESTIONS[:1],
        parser=parser,
        rubric=vf.Rubric([boxed_answer], parser=parser),
        max_turns=2,
    )
    (row,) = env.evaluate_sync(vf.rollout.TokenClient(sampler, template), "m", progress=False).rows
    assert row["error"] is None and row["reward"] == 1.0
    assert [m.get("reasoning_content") for m in row["completion"] if m["role"] == "assistant"] == [
        "hmm",
        "hmm",
    ]
    # The second prompt extends the first turn's ids: the sampled text, think block included.
    assert (
        template.decode(row["prompt_ids"] + row["completion_ids"]).count("<think>hmm</think>") == 2
    )


def test_where_reasoning_is_read_from_written_out():
    from verifiers_lite.core.reasoning import assistant_message, split_think

    assert assistant_message({"role": "assistant", "content": "a", "reasoning": "r"}) == {
        "role": "assistant",
        "content": "a",
        "reasoning_content": "r",
    }
    both = {"role": "assistant", "content": "a", "reasoning": "r2", "reasoning_content": "r1"}
    assert assistant_message(both) == {
        "role": "assistant",
        "content": "a",
        "reasoning_content": "r1",
    }
    # An empty reasoning is none; inline reasoning moves only when a split is given.
    assert assistant_message(
        {"role": "assistant", "content": "<think>x</think>y", "reasoning_content": ""}, split_think
    ) == {"role": "assistant", "content": "y", "reasoning_content": "x"}
    assert (
        assistant_message({"role": "assistant", "content": "<think>x</think>y"})["content"]
        == "<think>x</think>y"
    )
    assert split_think("  <think>\nplan\n</think>\n\nanswer") == ("plan", "answer")
    assert split_think("plan</think>answer") == ("plan", "answer")  # the template opened the block
    assert split_think("<think>a</think>b<think>c</think>d") == (
        None,
        "<think>a</think>b<think>c</think>d",
    )
    assert split_think("no block") == (None, "no block")


@pytest.mark.parametrize("history", ["keep", "strip"])
def test_the_chat_api_rollout_keeps_reasoning_and_sends_it_back_as_told(fake_server, history):
    from verifiers_lite.clients import OpenAIChatAPI
    from verifiers_lite.rollout import ToolManager

    api = OpenAIChatAPI("fake-think-reasoning", base_url=fake_server.base_url, api_key="x")
    (traj,) = vf.APIMultiTurnRollout(
        api, ToolManager([calculator]), max_turns=3, reasoning_history=history
    )([[{"role": "user", "content": "What is 3 + 4?"}]])
    assert traj["stop_reason"] == "stop" and traj["error"] is None
    kept = [m.get("reasoning_content") for m in traj["messages"] if m["role"] == "assistant"]
    assert kept == expected_reasoning(3, "+", 4)
    second = fake_server.requests()[-1]["messages"]
    sent = [m.get("reasoning_content") for m in second if m["role"] == "assistant"]
    assert sent == ([expected_reasoning(3, "+", 4)[0]] if history == "keep" else [None])
