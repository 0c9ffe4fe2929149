"""A deterministic OpenAI-compatible model whose answer depends only on the conversation.

For comparing two frameworks that run the same environment: each answer is a function of the
request's messages (roles, text, tool calls) and offered tools alone — no counter, no clock, no
seed — so two runs that send the same conversations get the same answers, and a run that sends a
different conversation (another system prompt, a missing tool, a lost stop sequence) gets
different ones. A hash of the conversation picks among answers that are right or wrong and
formatted or not, so rewards vary:

- arithmetic ``A op B`` in the last user message (right or off by a little), reversed text when
  asked to reverse, names sorted when asked to sort, a word in ``<guess>`` tags, a quoted
  sentence when asked for one;
- wrapped in the XML tags the prompt asks for (``<answer>``, ``<think>``, ...) and ``\\boxed{}``
  when asked, or plain, or with a tag left open;
- tool calls (arguments made from each tool's schema) when ``tools`` are offered, then an answer
  that quotes the tool results;
- judge prompts (a score, a grade, yes/no, inspect_ai's ``GRADE: $LETTER``) answered with a
  verdict picked by the hash, and inspect_ai's multiple-choice prompt with ``ANSWER: <letter>``;
- ``POST /v1/completions`` (string prompts): a continuation with line breaks, so a ``stop``
  sequence visibly cuts it. ``stop`` is honoured on both routes.

``verifiers_lite.testing.conversation_server`` serves it on 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

MODEL = "conversation-model"
_EXPR = re.compile(r"(-?\d+)\s*([+\-*])\s*(-?\d+)")
_TAG = re.compile(r"<([a-z_]+)>")
_WORDS = ("crane", "slate", "pious", "ghost", "lemon", "brick", "vapor", "quilt")
_GRADES = "ABCDF"


def text_of(content: Any) -> str:
    """A message's text: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _call_key(call: dict[str, Any]) -> list[Any]:
    fn = call.get("function") or {}
    try:
        args = json.loads(fn.get("arguments") or "{}")
    except ValueError:
        args = fn.get("arguments")
    return [fn.get("name"), args]


def conversation_hash(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> int:
    """The number every choice is drawn from: roles, text and tool calls (ids left out: each
    framework numbers them its own way) and the names of the tools offered."""
    canon = [
        [
            m.get("role"),
            text_of(m.get("content")),
            [_call_key(c) for c in m.get("tool_calls") or []],
        ]
        for m in messages
    ]
    names = sorted(str((t.get("function") or t).get("name")) for t in tools or [])
    digest = hashlib.sha256(json.dumps([canon, names], sort_keys=True).encode()).hexdigest()
    return int(digest[:12], 16)


def _arith(text: str, pick: int) -> str | None:
    match = _EXPR.search(text.replace("$", ""))
    if match is None:
        return None
    a, op, b = int(match.group(1)), match.group(2), int(match.group(3))
    value = a + b if op == "+" else a - b if op == "-" else a * b
    return str(value if pick % 5 < 3 else value + 1 + pick % 3)


def _sorted_names(text: str, pick: int) -> str | None:
    match = re.search(r"by (FIRST|LAST) name: ([^\n]+)", text)
    if match is None:
        return None
    names = [n.strip() for n in match.group(2).split(",") if n.strip()]
    key = (
        (lambda n: re.sub(r"([a-z])([A-Z])", r"\1 \2", n).split()[-1])
        if match.group(1) == "LAST"
        else None
    )
    ordered = sorted(names, key=key)
    if pick % 4 == 0 and len(ordered) > 1:
        ordered[0], ordered[1] = ordered[1], ordered[0]
    return "\n".join(ordered)


def _sentence(messages: list[dict[str, Any]], text: str, pick: int) -> str | None:
    ordinals = ("first", "second", "third", "fourth", "fifth")
    asked = next((i for i, o in enumerate(ordinals) if f"{o} sentence" in text), None)
    if asked is None:
        return None
    paragraph = re.search(r'"(.+)"', text_of(messages[-1].get("content")) if messages else "", re.S)
    first_user = next((text_of(m.get("content")) for m in messages if m.get("role") == "user"), "")
    source = paragraph.group(1) if paragraph else first_user
    sentences = source.split(". ")
    chosen = sentences[(asked + (pick % 3 == 0)) % len(sentences)] if sentences else ""
    return f'The {ordinals[asked]} sentence of the paragraph is: "{chosen}"'


def _judge(text: str, pick: int) -> str | None:
    low = text.lower()
    if "grade: $letter" in low:  # inspect_ai's model-graded scorers
        return f"Reads fine.\nGRADE: {'CI'[pick % 2]}"
    letters = re.search(
        r"answer: \$letters?' \(without quotes\) where letters? is one of ([a-z,]+)", low
    )
    if letters:  # inspect_ai's multiple_choice template
        options = [c for c in letters.group(1).upper() if c.isalpha()]
        return f"ANSWER: {options[pick % len(options)]}"
    if "<grade>" in low:
        return f"<scratchpad>\nReads fine.\n</scratchpad>\n<grade>{_GRADES[pick % 5]}</grade>"
    if "0 to 10" in low or "from 0-10" in low:
        return str(pick % 11)
    if "between 0.0 and 1.0" in low:
        return f"{(pick % 11) / 10:.1f}"
    if "yes or no" in low or "respond either" in low:
        return "yes" if pick % 2 else "no"
    return None


def _skill(messages: list[dict[str, Any]], text: str, pick: int) -> str | None:
    """The answer a skill gives to ``text`` (a user message), or None when none applies."""
    system = next((text_of(m.get("content")) for m in messages if m.get("role") == "system"), "")
    for answer in (_sorted_names(text, pick), _sentence(messages, text, pick)):
        if answer is not None:
            return answer
    if "reverse" in (system + text).lower():
        flipped = text[::-1]
        return flipped if pick % 3 else flipped[:-2] + "xy"
    if "<guess>" in system or "<guess>" in text:
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        return _WORDS[(pick + turn) % len(_WORDS)]
    return _arith(text, pick)


def _core(messages: list[dict[str, Any]], pick: int) -> str:
    """What the model says, before any formatting: a skill's answer to the last user message,
    else to the first (a follow-up such as "Are you sure?" is answered again), else some words."""
    users = [text_of(m.get("content")) for m in messages if m.get("role") == "user"]
    for text in (users[-1:] + users[:1]) if users else []:
        answer = _skill(messages, text, pick)
        if answer is not None:
            return answer
    words = users[-1].split() if users else []
    return " ".join(words[pick % max(len(words), 1) :][:6]) or "I am not sure."


def _requested_tags(messages: list[dict[str, Any]]) -> list[str]:
    """The XML tags the prompt names, in order of first appearance."""
    prompt = " ".join(
        text_of(m.get("content")) for m in messages if m.get("role") in ("system", "user")
    )
    return list(dict.fromkeys(_TAG.findall(prompt)))


_REASONING_TAGS = ("think", "reasoning", "scratchpad")


def _formatted(core: str, tags: list[str], boxed: bool, pick: int) -> str:
    """``core`` as the prompt asked for it, or not: four styles picked by the hash (all tags
    filled; reasoning only; plain; the answer's tag left open)."""
    style = (pick >> 8) % 4
    answer = f"\\boxed{{{core}}}" if boxed and style != 2 else core
    if style == 2 or not tags:
        return f"Here is my answer: {answer}" if style == 2 else f"Let me think.\n{answer}"
    reasoning = [t for t in tags if t in _REASONING_TAGS][:1]
    body = "".join(f"<{t}>\nLet me work through it.\n</{t}>\n" for t in reasoning)
    answer_tags = [t for t in tags if t not in _REASONING_TAGS]
    if not answer_tags or style == 1:
        return body + answer
    end = "" if style == 3 else f"\n</{answer_tags[0]}>"
    return body + f"<{answer_tags[0]}>\n{answer}{end}"


def _schema_args(tool: dict[str, Any], text: str, pick: int) -> dict[str, Any]:
    params = ((tool.get("function") or tool).get("parameters") or {}).get("properties") or {}
    expr = _EXPR.search(text)
    quoted = re.findall(r"'([^']+)'", text)
    words = re.findall(r"[A-Za-z]+", text) or ["word"]
    args: dict[str, Any] = {}
    for i, (name, spec) in enumerate(sorted(params.items())):
        kind, n = spec.get("type"), (pick >> (4 * i)) % 10
        if kind == "integer":
            args[name] = n
        elif kind == "number":
            args[name] = n + 0.5
        elif kind == "boolean":
            args[name] = bool(n % 2)
        else:
            args[name] = (
                expr.group(0)
                if expr and "expr" in name
                else quoted[0]
                if quoted and n % 2
                else words[n % len(words)].lower()
            )
    return args


def _tool_calls(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], pick: int
) -> list[dict[str, Any]]:
    last = next(
        (text_of(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), ""
    )
    by_name = {str((t.get("function") or t).get("name")): t for t in tools}
    named = sorted((last.find(n), n) for n in by_name if n in last)
    chosen = [n for _, n in named] or [sorted(by_name)[pick % len(by_name)]]
    if len(chosen) > 1 and pick % 5 == 0:
        chosen = chosen[:-1]
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    return [
        {
            "id": f"call_{turn}_{i}",
            "type": "function",
            "function": {
                "name": n,
                "arguments": json.dumps(_schema_args(by_name[n], last, pick >> i)),
            },
        }
        for i, n in enumerate(chosen)
    ]


def _after_tools(messages: list[dict[str, Any]], pick: int) -> str:
    """An answer quoting the last tool result, or the arguments of the call that made it too."""
    result = text_of(messages[-1].get("content"))
    caller = next((m for m in reversed(messages) if m.get("tool_calls")), None)
    if caller is None or pick % 3:
        return result
    args = [str(v) for c in caller["tool_calls"] for v in (_call_key(c)[1] or {}).values()]
    return f"{' '.join(args)} -> {result}"


def answer_chat(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The assistant message for a chat request."""
    pick = conversation_hash(messages, tools)
    last_role = messages[-1].get("role") if messages else None
    if tools and last_role != "tool" and pick % 4 != 3:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": _tool_calls(messages, tools, pick),
        }
    last_user = next(
        (text_of(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), ""
    )
    verdict = _judge(last_user, pick) if last_role == "user" else None
    if verdict is not None:
        return {"role": "assistant", "content": verdict}
    prompt = " ".join(text_of(m.get("content")) for m in messages if m.get("role") == "system")
    core = _after_tools(messages, pick) if last_role == "tool" else _core(messages, pick)
    return {
        "role": "assistant",
        "content": _formatted(
            core, _requested_tags(messages), "boxed" in prompt or pick % 7 == 0, pick
        ),
    }


def answer_text(prompt: str) -> str:
    """The continuation of a string prompt: two lines, so a ``\\n`` stop keeps only the first."""
    pick = conversation_hash([{"role": "user", "content": prompt}])
    words = prompt.split()
    first = " ".join(words[-(3 + pick % 5) :]) if words else "and so on"
    return f" {first}, as noted before.\nSecond line {pick % 97}."


def apply_stop(text: str, stop: Any) -> str:
    """``text`` cut at the first stop sequence, as an OpenAI server does."""
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    cut = min((i for i in (text.find(s) for s in stops if s) if i >= 0), default=len(text))
    return text[:cut]
