"""The deterministic model the differential tests use: its answer is a function of the
conversation alone, and it varies with the conversation."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from verifiers_lite.testing.conversation_model import answer_chat, apply_stop
from verifiers_lite.testing.conversation_server import ConversationServerProcess

TOOL = {
    "type": "function",
    "function": {
        "name": "add_one",
        "description": "x + 1",
        "parameters": {
            "type": "object",
            "properties": {"x": {"type": "integer"}, "label": {"type": "string"}},
            "required": ["x"],
        },
    },
}


def _ask(n: int, system: str = "Put the answer in <answer> tags.") -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"What is {n} + {n * 3}?"},
    ]


def test_same_conversation_same_answer_and_answers_vary() -> None:
    answers = [answer_chat(_ask(n))["content"] for n in range(40)]
    assert answers == [answer_chat(_ask(n))["content"] for n in range(40)]
    right = sum(str(4 * n) in a for n, a in enumerate(answers))
    assert 0 < right < 40, "some answers must be right and some wrong"
    assert any("</answer>" in a for a in answers) and any("</answer>" not in a for a in answers)
    assert answer_chat(_ask(3, system="Be terse.")) != answer_chat(_ask(3))


def test_tool_call_ids_do_not_change_the_answer() -> None:
    def conversation(call_id: str) -> list[dict[str, Any]]:
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": "add_one", "arguments": '{"x": 1}'},
        }
        return [
            *_ask(1),
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": "2"},
        ]

    assert answer_chat(conversation("call_a"), [TOOL]) == answer_chat(conversation("xyz-9"), [TOOL])


def test_offered_tools_are_called_with_arguments_of_their_schema() -> None:
    calls = [c for n in range(20) for c in answer_chat(_ask(n), [TOOL]).get("tool_calls") or []]
    assert calls, "with tools offered, most answers call one"
    for call in calls:
        args = json.loads(call["function"]["arguments"])
        assert call["function"]["name"] == "add_one"
        assert isinstance(args["x"], int) and isinstance(args["label"], str)


def test_stop_sequences_cut_both_routes() -> None:
    assert apply_stop("one\ntwo", ["\n"]) == "one" and apply_stop("one\ntwo", None) == "one\ntwo"
    with ConversationServerProcess() as server:

        def post(route: str, body: dict[str, Any]) -> dict[str, Any]:
            req = urllib.request.Request(
                f"{server.base_url}/{route}",
                json.dumps(body).encode(),
                {"content-type": "application/json"},
            )
            return json.loads(urllib.request.urlopen(req, timeout=10).read())

        text = post("completions", {"model": "m", "prompt": "The river rises in the hills"})[
            "choices"
        ][0]["text"]
        cut = post(
            "completions", {"model": "m", "prompt": "The river rises in the hills", "stop": ["\n"]}
        )
        assert "\n" in text and cut["choices"][0]["text"] == text.split("\n")[0]
        chat = post("chat/completions", {"model": "m", "messages": _ask(2), "stop": ["answer"]})
        assert "answer" not in chat["choices"][0]["message"]["content"]
