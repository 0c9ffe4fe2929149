"""A list script is followed by the rollout's own model turns: few-shot examples (assistant
messages in the prompt) never count as turns, in single-turn, multi-turn and tool environments;
rewards are the test's own hand computation for the turns the script plays."""

from __future__ import annotations

import verifiers_lite as vf

FEW_SHOT = [{"role": "user", "content": "What is 1 + 1?"}, {"role": "assistant", "content": "2"}]
ROWS = [
    {"question": "What is 2 + 3?", "answer": "5"},
    {"question": "What is 1 + 4?", "answer": "5"},
]


def _replies(row) -> list[str]:
    return [m["content"] for m in row["completion"] if m["role"] == "assistant"]


def _last_reply(completion) -> str:
    return next(m["content"] for m in reversed(completion) if m["role"] == "assistant") or ""


def solved(completion, answer) -> float:
    return 1.0 if _last_reply(completion) == answer else 0.0


def efficiency(completion, answer, state) -> float:
    return 0.5 / state["turns"] if _last_reply(completion) == answer else 0.0


class HintSum(vf.MultiTurnEnv):
    """Wrong answers get a hint and another try."""

    async def is_completed(self, messages, state) -> bool:
        return messages[-1]["content"] == state["answer"]

    async def env_response(self, messages, state):
        return [{"role": "user", "content": "Not quite: it is more than 4. Try again."}]


def _hint_sum(max_turns: int = 3) -> HintSum:
    return HintSum(
        dataset=ROWS, few_shot=FEW_SHOT, max_turns=max_turns, rubric=vf.Rubric([solved, efficiency])
    )


def test_multi_turn_with_few_shot_sends_the_first_reply_first():
    out = _hint_sum().evaluate_sync(
        vf.ScriptedClient(["1", "2", "3"]), "scripted", rollouts_per_example=2, progress=False
    )
    assert len(out.rows) == 4
    for row in out.rows:  # each rollout follows the script from its start
        assert row["error"] is None and _replies(row) == ["1", "2", "3"]
        assert row["prompt"][:2] == FEW_SHOT and row["stop_reason"] == "max_turns"
        assert row["reward"] == 0.0  # never right


def test_wrong_first_then_right_after_the_hint_scores_as_hand_computed():
    out = _hint_sum().evaluate_sync(vf.ScriptedClient(["4", "5"]), "scripted", progress=False)
    for row in out.rows:
        assert (
            _replies(row) == ["4", "5"] and row["turns"] == 2 and row["stop_reason"] == "env_done"
        )
        assert row["reward"] == 1.0 + 0.5 / 2  # solved after the hint, in two turns: 1.25, not 1.5


def test_single_turn_with_few_shot_gets_the_first_reply():
    exact = vf.Rubric([lambda completion, answer: float(completion[-1]["content"] == answer)])
    env = vf.SingleTurnEnv(
        dataset=[{"question": "Say A.", "answer": "A"}], few_shot=FEW_SHOT, rubric=exact
    )
    out = env.evaluate_sync(vf.ScriptedClient(["A", "B"]), "scripted", progress=False)
    assert out.rows[0]["completion"][-1]["content"] == "A" and out.rewards == [1.0]


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first.
        b: the second.
    """
    return a + b


def test_tool_env_with_few_shot_follows_the_scripted_tool_calls_from_the_first_turn():
    tool_shot = [
        {"role": "user", "content": "What is 1 + 1?"},
        {"role": "assistant", "content": "\\boxed{2}"},
    ]

    def boxed(completion, answer) -> float:
        return float(vf.extract_boxed_answer(_last_reply(completion)) == answer)

    def used_add(completion) -> float:
        return float(any(m["role"] == "tool" for m in completion))

    env = vf.ToolEnv(
        tools=[add],
        dataset=ROWS[:1],
        few_shot=tool_shot,
        max_turns=4,
        rubric=vf.Rubric([boxed, used_add], weights=[1.0, 0.25]),
    )
    client = vf.ScriptedClient(
        ["let me add", "\\boxed{5}"],
        tool_calls=[[{"name": "add", "arguments": {"a": 2, "b": 3}}], None],
    )
    (row,) = env.evaluate_sync(client, "scripted", progress=False).rows
    assert [m["role"] for m in row["completion"]] == ["assistant", "tool", "assistant"]
    assert row["completion"][1]["content"] == str(2 + 3)
    assert row["reward"] == 1.0 + 0.25 and client.requests == 2


def test_an_exhausted_script_names_the_rollout_s_turn_and_max_turns():
    out = _hint_sum(max_turns=3).evaluate_sync(
        vf.ScriptedClient(["1", "2"]), "scripted", progress=False
    )
    for row in out.rows:
        err = row["error"]
        assert err["category"] == "env_error" and _replies(row) == ["1", "2"]
        assert "model turn 3" in err["message"] and "max_turns=3" in err["message"], err["message"]
