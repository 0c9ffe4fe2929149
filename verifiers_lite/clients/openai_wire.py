"""The OpenAI wire formats served to programs: Chat Completions and the Responses API.

One assistant turn (a :class:`~verifiers_lite.core.model_client.ChatResponse`) written as a
``chat.completion`` body, as ``chat.completion.chunk`` server-sent events, as a Responses API
``response`` object or as its stream of events; and a Responses API request read back as chat
messages, tools and sampling arguments. The fake test server and the interception endpoint both
answer through these functions, so a program sees the same bytes from either.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from verifiers_lite.core.messages import Message
from verifiers_lite.core.model_client import ChatResponse, TurnUsage

__all__ = [
    "ResponsesRequest",
    "chat_completion_body",
    "chat_completion_chunks",
    "dumps",
    "read_usage",
    "responses_body",
    "responses_events",
    "responses_request",
    "sse",
]


def dumps(payload: Any) -> bytes:
    """The one JSON encoding of every body written here (compact, key order as built)."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def sse(events: Iterator[dict[str, Any]], *, named: bool = False, done: bool = False) -> bytes:
    """Server-sent events: one ``data:`` line per event (``event:`` lines too when ``named``,
    as the Responses API writes them), then ``data: [DONE]`` when ``done`` (Chat Completions)."""
    parts: list[bytes] = []
    for event in events:
        if named:
            parts.append(b"event: " + str(event["type"]).encode() + b"\n")
        parts.append(b"data: " + dumps(event) + b"\n\n")
    if done:
        parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def _out_message(message: Message) -> dict[str, Any]:
    """The assistant message as the wire carries it: content (None when only tools were called),
    reasoning under ``reasoning_content``, tool calls."""
    content = message.get("content")
    calls = message.get("tool_calls") or []
    out: dict[str, Any] = {
        "role": "assistant",
        "content": content if content or not calls else None,
    }
    # Other fields (reasoning under either name) as the model gave them.
    out.update(
        (k, v)
        for k, v in message.items()
        if k not in ("role", "content", "tool_calls") and v is not None
    )
    if calls:
        out["tool_calls"] = [
            {
                "id": c.get("id"),
                "type": "function",
                "function": {
                    "name": c["function"]["name"],
                    "arguments": c["function"].get("arguments") or "",
                },
            }
            for c in calls
        ]
    return out


def _chat_usage(usage: TurnUsage) -> dict[str, Any]:
    """A turn's usage as Chat Completions writes it (what :func:`read_usage` reads back)."""
    out: dict[str, Any] = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    }
    if usage.reasoning_tokens:
        out["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens}
    if usage.cached_prompt_tokens:
        out["prompt_tokens_details"] = {"cached_tokens": usage.cached_prompt_tokens}
    for name, value in usage.extra.items():  # dotted names back to nested fields
        *path, last = name.split(".")
        node = out
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    return out


_PLAIN_USAGE = frozenset({"prompt_tokens", "completion_tokens", "total_tokens"})


def read_usage(usage: Any) -> TurnUsage:
    """Every count of a completion's ``usage``: prompt and completion tokens, the reasoning ones
    (``completion_tokens_details.reasoning_tokens``), the cached prompt ones
    (``prompt_tokens_details.cached_tokens``), and any other numeric field a provider reports,
    kept in ``extra`` (nested ones named with dots)."""
    if not isinstance(usage, dict):
        return TurnUsage()
    if usage.keys() <= _PLAIN_USAGE and all(type(v) is int for v in usage.values()):
        # the common answer (counts only, no details): nothing to flatten or keep as extra
        return TurnUsage(usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0)
    flat = _numeric_fields(usage)
    taken = {
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",  # prompt + completion: derived, not kept
        "completion_tokens_details.reasoning_tokens",
        "prompt_tokens_details.cached_tokens",
    }
    return TurnUsage(
        int(flat.get("prompt_tokens") or 0),
        int(flat.get("completion_tokens") or 0),
        int(flat.get("completion_tokens_details.reasoning_tokens") or 0),
        int(flat.get("prompt_tokens_details.cached_tokens") or 0),
        {k: v for k, v in flat.items() if k not in taken},
    )


def _numeric_fields(value: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """The numbers of a nested usage dict by dotted name (flags, strings and nulls left out)."""
    out: dict[str, float] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, dict):
            out.update(_numeric_fields(item, f"{name}."))
        elif isinstance(item, (int, float)) and not isinstance(item, bool) and item == item:
            out[name] = item
    return out


def _head(response: ChatResponse, model: str, rid: str, created: int, obj: str) -> dict[str, Any]:
    head: dict[str, Any] = {
        "id": response.response_id or rid,
        "object": obj,
        "created": response.created if response.created is not None else created,
        "model": model,
    }
    if response.system_fingerprint:
        head["system_fingerprint"] = response.system_fingerprint
    return head


def chat_completion_body(
    response: ChatResponse, model: str, rid: str, created: int
) -> dict[str, Any]:
    """A ``chat.completion`` body (the response's own id and created time when it has them,
    else ``rid``/``created``)."""
    return {
        **_head(response, model, rid, created, "chat.completion"),
        "choices": [
            {
                "index": 0,
                "message": _out_message(response.message),
                "finish_reason": response.finish_reason or "stop",
            }
        ],
        "usage": _chat_usage(response.usage),
    }


def chat_completion_chunks(
    response: ChatResponse, model: str, rid: str, created: int, *, include_usage: bool
) -> Iterator[dict[str, Any]]:
    """The turn as ``chat.completion.chunk`` events: the role, the reasoning and the content each
    in one delta, one delta per tool call, the finish reason, then the usage when asked
    (``stream_options.include_usage``)."""
    head = _head(response, model, rid, created, "chat.completion.chunk")
    message = _out_message(response.message)

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for key in ("reasoning_content", "reasoning"):
        if message.get(key):
            yield chunk({key: message[key]})
    if message["content"]:
        yield chunk({"content": message["content"]})
    for i, call in enumerate(message.get("tool_calls") or []):
        yield chunk({"tool_calls": [{"index": i, **call}]})
    yield chunk({}, response.finish_reason or "stop")
    if include_usage:
        yield {**head, "choices": [], "usage": _chat_usage(response.usage)}


# -- the Responses API ---------------------------------------------------------------------------


class ResponsesRequest:
    """A Responses API request read as a chat request: ``messages`` (``instructions`` first, as
    the system message), ``tools`` in the chat form, ``sampling_args`` in chat names
    (``max_output_tokens`` as ``max_tokens``), ``stream``."""

    __slots__ = ("messages", "model", "sampling_args", "stream", "tools")

    def __init__(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]] | None,
        sampling_args: dict[str, Any],
        model: str,
        stream: bool,
    ) -> None:
        self.messages = messages
        self.tools = tools
        self.sampling_args = sampling_args
        self.model = model
        self.stream = stream


_RESPONSES_SAMPLING = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_output_tokens": "max_tokens",
    "tool_choice": "tool_choice",
    "parallel_tool_calls": "parallel_tool_calls",
    "seed": "seed",
}


def responses_request(body: dict[str, Any]) -> ResponsesRequest:
    """Read a Responses API request; ValueError naming what cannot be read (a
    ``previous_response_id``: the conversation must be sent whole)."""
    if body.get("previous_response_id"):
        raise ValueError(
            "previous_response_id is not served: send the whole conversation as 'input' "
            "(store=False)"
        )
    messages: list[Message] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": str(body["instructions"])})
    raw = body.get("input")
    if isinstance(raw, str):
        messages.append({"role": "user", "content": raw})
    elif isinstance(raw, list):
        for item in raw:
            _add_input_item(messages, item)
    else:
        raise ValueError("'input' must be a string or a list of input items")
    tools = [_chat_tool(t) for t in body.get("tools") or [] if t.get("type") == "function"]
    args = {
        chat: body[name] for name, chat in _RESPONSES_SAMPLING.items() if body.get(name) is not None
    }
    return ResponsesRequest(
        messages, tools or None, args, str(body.get("model") or ""), bool(body.get("stream"))
    )


def _text_of(content: Any) -> Any:
    """A message's content: a string as it is; text parts joined; other parts kept in the chat
    form (images as ``image_url`` parts)."""
    if not isinstance(content, list):
        return "" if content is None else content
    parts: list[dict[str, Any]] = []
    for part in content:
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            parts.append({"type": "text", "text": part.get("text") or ""})
        elif kind == "input_image":
            parts.append({"type": "image_url", "image_url": {"url": part.get("image_url")}})
        elif kind == "refusal":
            parts.append({"type": "text", "text": part.get("refusal") or ""})
    if all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def _add_input_item(messages: list[Message], item: Any) -> None:
    if not isinstance(item, dict):
        raise ValueError(f"an input item must be an object, got {type(item).__name__}")
    kind = item.get("type", "message")
    if kind == "message":
        role = item.get("role", "user")
        messages.append(
            {
                "role": "system" if role == "developer" else role,
                "content": _text_of(item.get("content")),
            }
        )
    elif kind == "function_call":
        call = {
            "id": item.get("call_id") or item.get("id"),
            "type": "function",
            "function": {"name": item.get("name"), "arguments": item.get("arguments") or ""},
        }
        last = messages[-1] if messages else None
        if last is not None and last.get("role") == "assistant":
            last.setdefault("tool_calls", []).append(call)
        else:
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
    elif kind == "function_call_output":
        output = item.get("output")
        messages.append(
            {
                "role": "tool",
                "tool_call_id": item.get("call_id"),
                "content": output if isinstance(output, str) else json.dumps(output),
            }
        )
    elif kind == "reasoning":
        return  # the model's own summary of its reasoning: not sent back
    else:
        raise ValueError(f"input item of type {kind!r} is not served")


def _chat_tool(tool: dict[str, Any]) -> dict[str, Any]:
    fn = {k: tool[k] for k in ("name", "description", "parameters", "strict") if k in tool}
    return {"type": "function", "function": fn}


def _response_ids(rid: str) -> tuple[str, str]:
    """The response's id and its message item's id, both derived from the turn's id."""
    base = rid.removeprefix("chatcmpl-")
    return f"resp_{base}", f"msg_{base}"


def _output_items(message: dict[str, Any], msg_id: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if message["content"]:
        items.append(
            {
                "type": "message",
                "id": msg_id,
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": message["content"], "annotations": []}],
            }
        )
    for call in message.get("tool_calls") or []:
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{call['id']}",
                "call_id": call["id"],
                "name": call["function"]["name"],
                "arguments": call["function"]["arguments"],
                "status": "completed",
            }
        )
    return items


def responses_body(
    response: ChatResponse, model: str, rid: str, created: int, *, status: str = "completed"
) -> dict[str, Any]:
    """A Responses API ``response`` object for the turn (``length`` as ``incomplete``)."""
    head = _head(response, model, rid, created, "response")
    resp_id, msg_id = _response_ids(head["id"])
    incomplete = response.finish_reason == "length" and status == "completed"
    usage = response.usage
    return {
        "id": resp_id,
        "object": "response",
        "created_at": head["created"],
        "status": "incomplete" if incomplete else status,
        "model": model,
        "output": _output_items(_out_message(response.message), msg_id)
        if status == "completed"
        else [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "usage": {
            "input_tokens": usage.prompt_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        }
        if status == "completed"
        else None,
    }


def responses_events(
    response: ChatResponse, model: str, rid: str, created: int
) -> Iterator[dict[str, Any]]:
    """The turn as Responses API stream events: created, each output item added, its text or
    arguments in one delta, done, then ``response.completed`` with the whole response."""
    final = responses_body(response, model, rid, created)
    seq = iter(range(1 << 30))
    started = responses_body(response, model, rid, created, status="in_progress")
    yield {"type": "response.created", "sequence_number": next(seq), "response": started}
    for index, item in enumerate(final["output"]):
        yield from _item_events(item, index, seq)
    kind = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
    yield {"type": kind, "sequence_number": next(seq), "response": final}


def _item_events(item: dict[str, Any], index: int, seq: Iterator[int]) -> Iterator[dict[str, Any]]:
    if item["type"] == "message":
        text = item["content"][0]["text"]
        empty_part = {"type": "output_text", "text": "", "annotations": []}
        yield {
            "type": "response.output_item.added",
            "sequence_number": next(seq),
            "output_index": index,
            "item": {**item, "status": "in_progress", "content": []},
        }
        where = {"item_id": item["id"], "output_index": index, "content_index": 0}
        yield {
            "type": "response.content_part.added",
            "sequence_number": next(seq),
            **where,
            "part": empty_part,
        }
        yield {
            "type": "response.output_text.delta",
            "sequence_number": next(seq),
            **where,
            "delta": text,
            "logprobs": [],
        }
        yield {
            "type": "response.output_text.done",
            "sequence_number": next(seq),
            **where,
            "text": text,
            "logprobs": [],
        }
        yield {
            "type": "response.content_part.done",
            "sequence_number": next(seq),
            **where,
            "part": item["content"][0],
        }
    else:
        yield {
            "type": "response.output_item.added",
            "sequence_number": next(seq),
            "output_index": index,
            "item": {**item, "status": "in_progress", "arguments": ""},
        }
        where = {"item_id": item["id"], "output_index": index}
        yield {
            "type": "response.function_call_arguments.delta",
            "sequence_number": next(seq),
            **where,
            "delta": item["arguments"],
        }
        yield {
            "type": "response.function_call_arguments.done",
            "sequence_number": next(seq),
            **where,
            "name": item["name"],
            "arguments": item["arguments"],
        }
    yield {
        "type": "response.output_item.done",
        "sequence_number": next(seq),
        "output_index": index,
        "item": item,
    }
