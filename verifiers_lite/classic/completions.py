"""``message_type="completion"``: model turns as text completions of a string prompt.

verifiers 0.3.1 kept such prompts as messages and, with a completions client, sent the texts of
the conversation's messages joined by blank lines to ``POST /completions``; the text that came
back is the assistant's turn. :class:`TextCompletions` does the same over the run's client (the
lean :class:`~verifiers_lite.clients.http.ChatClient` a base URL or an ``openai.AsyncOpenAI``
becomes). Tools cannot be offered to a text completion: refused before the request.
"""

from __future__ import annotations

from typing import Any

from verifiers_lite.classic.errors import ClassicUnsupportedError
from verifiers_lite.classic.parsers import content_text
from verifiers_lite.core.messages import Message
from verifiers_lite.core.model_client import ChatResponse, ModelClient


def completion_prompt(messages: list[Message]) -> str:
    """The conversation as one string: each message's text, joined by blank lines (images refused)."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(p, dict) and p.get("type") != "text" for p in content
        ):
            raise ValueError(
                "a text completion takes text only; this prompt has non-text content (e.g. an image)"
            )
    return "\n\n".join(content_text(m.get("content")) for m in messages)


class TextCompletions:
    """A model client whose every turn is a text completion over ``client`` (see the module)."""

    def __init__(self, client: ModelClient) -> None:
        complete = getattr(client, "complete_text", None)
        if complete is None:
            raise ClassicUnsupportedError(
                f"message_type='completion' needs a client of an OpenAI-compatible server (a base URL or an "
                f"openai.AsyncOpenAI) to send text completions; {type(client).__name__} sends chat only"
            )
        self._complete = complete

    async def chat(
        self,
        model: str,
        messages: list[Message],
        sampling_args: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatResponse:
        if tools:
            raise ClassicUnsupportedError(
                "tools cannot be offered to a text completion (message_type='completion')"
            )
        response: ChatResponse = await self._complete(
            model, completion_prompt(messages), sampling_args
        )
        return response
