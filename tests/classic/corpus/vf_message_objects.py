"""Reward code that looks at what the messages are: their type, isinstance, str, model_dump,
JSON-serialisability, attribute and item access, tool calls and content parts. Each look is its
own metric, so a framework whose messages behave otherwise shows which."""

import json

import verifiers as vf
from datasets import Dataset


def add(a: int, b: int) -> int:
    """
    Adds two integers.

    Args:
        a: The first integer.
        b: The second integer.

    Returns:
        The sum.
    """
    return a + b


def _raises(func, kind) -> bool:
    try:
        func()
    except kind:
        return True
    except Exception:
        return False
    return False


def not_a_dict(completion) -> float:
    return float(not any(isinstance(m, dict) for m in completion))


def type_names(prompt, completion) -> float:
    names = {type(m).__name__ for m in list(prompt) + list(completion)}
    return float(names <= {"SystemMessage", "UserMessage", "AssistantMessage", "ToolMessage"})


def str_is_fields(completion) -> float:
    return float(str(completion[0]).startswith("role='assistant' content="))


def dump_has_unset_fields(completion) -> float:
    return float(completion[0].model_dump().get("reasoning_content", "absent") is None)


def json_refused(completion) -> float:
    # reward code of this kind was written to catch this and score 0
    try:
        json.dumps(completion)
    except TypeError:
        return 1.0
    return 0.0


def item_and_attribute(completion) -> float:
    m = completion[0]
    return float(
        m["role"] == m.role == "assistant"
        and m.get("missing", "default") == "default"
        and "content" in m
        and "missing" not in m
        and _raises(lambda: m["missing"], AttributeError)
        and _raises(lambda: m.missing, AttributeError)
    )


def equal_to_mapping(completion) -> float:
    m = completion[0]
    return float(m == m.model_dump() and m != {"role": "assistant"})


def tool_call_shape(completion) -> float:
    calls = [c for m in completion if m.role == "assistant" for c in (m.tool_calls or [])]
    if not calls:
        return 0.5
    c = calls[0]
    return float(
        type(c).__name__ == "ToolCall"
        and not isinstance(c, dict)
        and sorted(c.model_dump()) == ["arguments", "id", "name"]
        and isinstance(c.arguments, str)
        and not hasattr(c, "function")
    )


def tool_messages(completion) -> float:
    replies = [m for m in completion if m.role == "tool"]
    return float(all(type(m).__name__ == "ToolMessage" and m.tool_call_id for m in replies))


def content_parts(prompt) -> float:
    parts = prompt[-1].content
    return float(isinstance(parts, list) and type(parts[0]).__name__ == "TextContentPart" and parts[0].text != "")


def said_the_sum(completion, answer) -> float:
    last = completion[-1]
    return 1.0 if last.role == "assistant" and answer in str(last.content or "") else 0.0


def load_environment(n: int = 6) -> vf.ToolEnv:
    rows = [
        {
            "prompt": [{"role": "user", "content": [{"type": "text", "text": f"What is {i} + {2 * i + 1}? Use the tool."}]}],
            "answer": str(3 * i + 1),
        }
        for i in range(n)
    ]
    funcs = [
        said_the_sum,
        not_a_dict,
        type_names,
        str_is_fields,
        dump_has_unset_fields,
        json_refused,
        item_and_attribute,
        equal_to_mapping,
        tool_call_shape,
        tool_messages,
        content_parts,
    ]
    rubric = vf.Rubric(funcs=funcs, weights=[1.0] + [0.1] * (len(funcs) - 1))
    return vf.ToolEnv(dataset=Dataset.from_list(rows), tools=[add], rubric=rubric, max_turns=3)
