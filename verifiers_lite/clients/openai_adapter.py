"""Use a user's ``openai.AsyncOpenAI`` (or anything shaped like it) as a model client."""

from __future__ import annotations

from typing import Any

from verifiers_lite.clients.base import ChatResponse, Message
from verifiers_lite.clients.http import parse_chat_completion
from verifiers_lite.errors import ModelAPIError


class OpenAIClientAdapter:
    """Adapts ``client.chat.completions.create`` to :class:`ModelClient`.

    The OpenAI client keeps its own retry policy (``max_retries`` on the client); errors that
    survive it are mapped onto the library's error categories.
    """

    def __init__(self, client: Any) -> None:
        self.client = client
        self.base_url = str(getattr(client, "base_url", "")).rstrip("/")
        self.api_key = getattr(client, "api_key", None)

    def __repr__(self) -> str:
        return f"OpenAIClientAdapter({self.base_url!r})"

    async def chat(
        self,
        model: str,
        messages: list[Message],
        sampling_args: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatResponse:
        import openai

        kwargs: dict[str, Any] = dict(sampling_args or {})
        if tools:
            kwargs["tools"] = tools
        try:
            completion = await self.client.chat.completions.create(
                model=model, messages=messages, **kwargs
            )
        except openai.RateLimitError as exc:
            raise ModelAPIError(str(exc), category="model_rate_limited", status=429) from exc
        except openai.APITimeoutError as exc:
            raise ModelAPIError(str(exc), category="model_timeout") from exc
        except openai.APIConnectionError as exc:
            raise ModelAPIError(str(exc), category="model_connection") from exc
        except openai.APIStatusError as exc:
            raise ModelAPIError(str(exc), category="model_http_error", status=exc.status_code) from exc
        return parse_chat_completion(completion.model_dump_json(), self.base_url)
