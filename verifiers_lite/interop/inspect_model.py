"""An inspect_ai model whose requests go through this library's model clients.

Inspect's solvers and scorers ask a ``Model`` to generate; this one (provider name
``verifiers_lite``) turns each request into a ``ModelClient.chat`` call: within a rollout through
the environment's ``get_model_response`` (so usage, timing and the trajectory are recorded as for
any rollout), for a judge (``model_graded_qa``) straight to the client.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from verifiers_lite.core.model_client import ChatResponse
from verifiers_lite.interop.inspect_extra import inspect_module
from verifiers_lite.interop.inspect_messages import from_inspect_messages

PROVIDER = "verifiers_lite"

# One model turn: (messages, OpenAI tool schemas or None) -> the client's answer.
ChatFn = Callable[[list[dict[str, Any]], "list[dict[str, Any]] | None"], Awaitable[ChatResponse]]

_registered: list[bool] = []


def tool_schema(info: Any) -> dict[str, Any]:
    """An inspect ``ToolInfo`` as an OpenAI function tool."""
    return {
        "type": "function",
        "function": {
            "name": info.name,
            "description": info.description,
            "parameters": info.parameters.model_dump(exclude_none=True),
        },
    }


def _assistant(response: ChatResponse, model: str) -> Any:
    m, tool = inspect_module("inspect_ai.model"), inspect_module("inspect_ai.tool")
    calls = [
        tool.ToolCall(
            id=str(c.get("id") or ""),
            function=str(c["function"]["name"]),
            arguments=json.loads(c["function"].get("arguments") or "{}"),
        )
        for c in response.tool_calls
    ]
    text = response.content or ""
    content: Any = text
    if response.reasoning:
        content = [m.ContentReasoning(reasoning=response.reasoning), m.ContentText(text=text)]
    return m.ChatMessageAssistant(
        content=content, tool_calls=calls or None, model=model, source="generate"
    )


def _output(response: ChatResponse, model: str) -> Any:
    m = inspect_module("inspect_ai.model")
    message = _assistant(response, model)
    stop = {"length": "max_tokens", "tool_calls": "tool_calls"}.get(
        str(response.finish_reason), "stop"
    )
    usage = response.usage
    return m.ModelOutput(
        model=model,
        choices=[m.ChatCompletionChoice(message=message, stop_reason=stop)],
        usage=m.ModelUsage(
            input_tokens=usage.prompt_tokens,
            output_tokens=usage.completion_tokens,
            total_tokens=usage.prompt_tokens + usage.completion_tokens,
            reasoning_tokens=usage.reasoning_tokens or None,
        ),
    )


def _api_class() -> type:
    m = inspect_module("inspect_ai.model")

    class ClientModelAPI(m.ModelAPI):  # type: ignore[misc, name-defined]
        """Inspect's model API over a :data:`ChatFn`."""

        def __init__(self, model_name: str, chat: ChatFn, **kwargs: Any) -> None:
            super().__init__(model_name=model_name, config=kwargs.get("config", m.GenerateConfig()))
            self.chat = chat

        async def generate(self, input: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
            schemas = [tool_schema(t) for t in tools] or None
            response = await self.chat(from_inspect_messages(input), schemas)
            return _output(response, self.model_name)

    return ClientModelAPI


def client_model(model: str, chat: ChatFn) -> Any:
    """An inspect ``Model`` named ``model`` whose every request is ``chat``."""
    m = inspect_module("inspect_ai.model")
    if not _registered:
        api = _api_class()
        m.modelapi(name=PROVIDER)(lambda: api)
        _registered.append(True)
    return m.get_model(f"{PROVIDER}/{model}", chat=chat, memoize=False)
