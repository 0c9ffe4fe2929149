"""A model client whose answers a Python function decides (tests and dry runs; no server)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

from verifiers_lite.clients.base import ChatResponse, Message

Respond = Callable[[list[Message]], "str | Message"]


class ScriptedClient:
    """``respond(messages)`` returns the assistant's text, or a full assistant message dict (for
    tool calls). It may be sync or async. Calls are counted in ``calls``."""

    def __init__(self, respond: Callable[[list[Message]], Any]) -> None:
        if not callable(respond):
            raise TypeError(f"respond must be callable, got {respond!r}")
        self.respond = respond
        self.calls = 0

    async def chat(
        self,
        model: str,
        messages: list[Message],
        sampling_args: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatResponse:
        self.calls += 1
        answer = self.respond(messages)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, str):
            return ChatResponse({"role": "assistant", "content": answer})
        if not isinstance(answer, dict):
            raise TypeError(f"respond returned {type(answer).__name__}, not a str or message dict")
        return ChatResponse({"role": "assistant", "content": answer.get("content") or "", **answer})


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call_0") -> Message:
    """An assistant message calling tool ``name`` with ``arguments``."""
    return {
        "role": "assistant", "content": "",
        "tool_calls": [{"id": call_id, "type": "function",
                        "function": {"name": name, "arguments": json.dumps(arguments)}}],
    }
