"""A model client for the classic-layer tests: answers from a function of the messages and keeps
every request (messages, sampling args, tools) for the test to read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from verifiers_lite.core.model_client import ChatResponse


class RecordingClient:
    """``reply(messages, tools) -> str | dict`` (an assistant message dict may carry tool_calls)."""

    def __init__(self, reply: Callable[[list[dict[str, Any]], Any], Any]) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []

    async def chat(
        self,
        model: str,
        messages: list[dict[str, Any]],
        sampling_args: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatResponse:
        self.requests.append(
            {
                "messages": [dict(m) for m in messages],
                "sampling_args": sampling_args,
                "tools": tools,
            }
        )
        answer = self.reply(messages, tools)
        message = (
            {"role": "assistant", "content": answer}
            if isinstance(answer, str)
            else {"role": "assistant", **answer}
        )
        return ChatResponse(
            message=message, finish_reason="tool_calls" if message.get("tool_calls") else "stop"
        )


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """An OpenAI-shaped tool call."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
