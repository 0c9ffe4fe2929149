"""Classic ToolEnv / StatefulToolEnv: tools offered in the request's ``tools``, calls answered
with tool messages (errors through error_formatter, stop_errors ending the rollout), tool-call
metrics, hidden arguments filled by update_tool_args, and ToolEnv.add_rubric."""

from __future__ import annotations

import json

from datasets import Dataset

import verifiers_lite.classic as vf
from tests.classic.recording import RecordingClient, tool_call

ROWS = [{"question": "add", "answer": "5"}]


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first
        b: second
    """
    return a + b


async def fail(x: str) -> str:
    """Always raises."""
    raise ValueError(f"bad {x}")


def _calls_then_answer(messages, tools):
    if not any(m["role"] == "tool" for m in messages):
        return {
            "content": None,
            "tool_calls": [
                tool_call("c1", "add", '{"a": 2, "b": 3}'),
                tool_call("c2", "fail", '{"x": "y"}'),
                tool_call("c3", "add", "not json"),
            ],
        }
    return "5"


def _run(env, reply=_calls_then_answer):
    client = RecordingClient(reply)
    out = env.evaluate_sync(client, "m", progress=False)
    return out.rows[0], client


def test_tools_are_offered_called_and_counted():
    def right(completion, answer) -> float:
        return float(completion[-1].content == answer)

    env = vf.ToolEnv(
        dataset=Dataset.from_list(ROWS),
        tools=[add, fail],
        rubric=vf.Rubric(funcs=[right]),
        max_turns=5,
    )
    row, client = _run(env)
    offered = client.requests[0]["tools"]
    assert [t["function"]["name"] for t in offered] == ["add", "fail"]
    assert offered[0]["function"]["parameters"]["required"] == ["a", "b"]
    tool_replies = [m for m in row["completion"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tool_replies] == [
        ("c1", "5"),
        ("c2", "bad y"),
        ("c3", "Expecting value: line 1 column 1 (char 0)"),
    ]
    assert row["reward"] == 1.0 and row["stop_reason"] == "stop"
    assert row["metrics"] == {
        "right": 1.0,
        "num_turns": 2.0,
        "total_tool_calls": 3.0,
        "add_calls": 2.0,
        "fail_calls": 1.0,
    }


def test_stop_errors_end_the_rollout_as_an_error_row():
    env = vf.ToolEnv(
        dataset=Dataset.from_list(ROWS), tools=[add, fail], stop_errors=[ValueError], max_turns=5
    )
    row, client = _run(env)
    assert len(client.requests) == 1
    assert row["error"]["category"] == "env_error" and "ToolCallError" in row["error"]["message"]


class Notes(vf.StatefulToolEnv):
    def __init__(self, **kwargs):
        super().__init__(tools=[], max_turns=4, **kwargs)
        self.add_tool(self.write, args_to_skip=["notebook"])

    def write(self, text: str, notebook: list) -> str:
        """Write a note.

        Args:
            text: the note
            notebook: the rollout's notes (filled by the environment)
        """
        notebook.append(text)
        return f"{len(notebook)} notes"

    async def setup_state(self, state, **kwargs):
        state["notebook"] = []
        return state

    def update_tool_args(self, tool_name, tool_args, messages, state, **kwargs):
        return {**tool_args, "notebook": state["notebook"]}


def test_stateful_tools_hide_arguments_and_get_them_from_the_state():
    def note_count(state) -> float:
        return float(len(state["notebook"]))

    def reply(messages, tools):
        done = sum(m["role"] == "tool" for m in messages)
        return (
            {
                "content": None,
                "tool_calls": [tool_call(f"n{done}", "write", json.dumps({"text": "hi"}))],
            }
            if done < 2
            else "done"
        )

    row, client = _run(
        Notes(dataset=Dataset.from_list(ROWS), rubric=vf.Rubric(funcs=[note_count])), reply
    )
    schema = client.requests[0]["tools"][0]["function"]["parameters"]
    assert list(schema["properties"]) == ["text"] and schema["required"] == ["text"]
    assert [m["content"] for m in row["completion"] if m["role"] == "tool"] == [
        "1 notes",
        "2 notes",
    ]
    assert row["reward"] == 2.0 and row["metrics"]["write_calls"] == 2.0


def test_tool_env_add_rubric_scores_with_both():
    class Extra(vf.Rubric):
        def __init__(self):
            super().__init__()
            self.add_reward_func(self.assistant_turns, 0.5)

        def assistant_turns(self, completion) -> float:
            return float(sum(m.role == "assistant" for m in completion))

    env = vf.ToolEnv(
        dataset=Dataset.from_list(ROWS),
        tools=[add],
        rubric=vf.Rubric(funcs=[lambda completion: 1.0]),
        max_turns=5,
    )
    env.add_rubric(Extra())
    row, _ = _run(env, lambda messages, tools: "5")
    assert row["reward"] == 1.5 and row["metrics"]["assistant_turns"] == 1.0
