"""``ChatAPI``: a chat completion API called one turn at a time, and the model client over it.

A ``ChatAPI`` is the small interface :class:`~verifiers_lite.envs.api_multi_turn.APIMultiTurnRollout`
drives: ``chat(messages, tools, params, extra_body) -> (assistant message, finish_reason)``,
blocking or ``async``. :func:`chat_api_client` turns one into a :class:`ModelClient`, so its
turns run through the environments' multi-turn loop like any other client's.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from typing import Any, Protocol

from verifiers_lite.clients.http import ChatClient
from verifiers_lite.clients.openai_adapter import openai_error
from verifiers_lite.core.errors import ModelAPIError
from verifiers_lite.core.messages import Message
from verifiers_lite.core.model_client import ChatResponse, ModelClient, OpenAIClientLike

__all__ = ["ChatAPI", "ChatAPIClient", "OpenAIChatAPI", "chat_api_client", "clean_messages"]

# What a chat API's message schema accepts; the rest (bookkeeping keys) is not sent.
# A turn's reasoning goes as ``reasoning_content``, as the environment's reasoning_history says.
_MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name", "reasoning_content")


class ChatAPI(Protocol):
    """One chat completion: returns (assistant message dict, finish_reason). ``chat`` may be a
    plain (blocking) method or ``async``."""

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: dict[str, Any],
        extra_body: dict[str, Any] | None,
    ) -> Any: ...


class OpenAIChatAPI:
    """``ChatAPI`` over an OpenAI-compatible endpoint (vLLM, llama.cpp, hosted APIs).

    ``chat`` is the ``openai`` package's blocking call. Driven as a model client
    (:func:`chat_api_client`), an endpoint this class connected to itself is called through the
    library's async :class:`ChatClient` (same URL, key, timeout; ``max_retries`` through the
    library's retry policy); a ``client`` given by the caller (a blocking ``openai.OpenAI``, or
    shaped like one) is called as it is.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
        client: OpenAIClientLike | None = None,
    ) -> None:
        self.model = model
        self.async_client: ChatClient | None = None
        if client is None:
            from openai import OpenAI

            client = OpenAI(
                base_url=base_url,
                api_key=api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
                timeout=timeout,
                max_retries=max_retries,
            )
            self.async_client = ChatClient.from_openai(client)
        self.client: OpenAIClientLike = client  # a blocking openai.OpenAI, or shaped like one

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: dict[str, Any],
        extra_body: dict[str, Any] | None,
    ) -> tuple[dict[str, Any], str | None]:
        kwargs: dict[str, Any] = dict(params)
        if tools:
            kwargs["tools"] = tools
        if extra_body:
            kwargs["extra_body"] = extra_body
        resp = self.client.chat.completions.create(model=self.model, messages=messages, **kwargs)
        choice = resp.choices[0]
        msg = choice.message.model_dump(exclude_none=True)
        return msg, choice.finish_reason


class ChatAPIClient:
    """:class:`ModelClient` over a :class:`ChatAPI` (``model`` is the API's business: ignored).

    ``sampling_args["extra_body"]`` goes to the API as ``extra_body``. A blocking ``chat`` runs
    on the event loop's default executor (``asyncio.to_thread``). Failures become the library's
    error categories: ``openai`` errors as the SDK adapter maps them, ``ConnectionError``
    ``model_connection``, ``TimeoutError`` ``model_timeout``; anything else the API raises is
    recorded as the caller's code failing (``env_error``).
    """

    def __init__(self, api: ChatAPI) -> None:
        self.api = api
        self._async = inspect.iscoroutinefunction(api.chat)

    def __repr__(self) -> str:
        return f"ChatAPIClient({type(self.api).__name__})"

    async def chat(
        self,
        model: str,
        messages: list[Message],
        sampling_args: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatResponse:
        params = dict(sampling_args or {})
        extra_body = params.pop("extra_body", None)
        args = (messages, tools or None, params, extra_body)
        try:
            if self._async:
                msg, finish = await self.api.chat(*args)
            else:
                msg, finish = await asyncio.to_thread(self.api.chat, *args)
        except (ModelAPIError, TimeoutError):
            raise  # TimeoutError: the environment records a model call's timeout as model_timeout
        except ConnectionError as exc:
            raise ModelAPIError(
                f"{type(exc).__name__}: {exc}", category="model_connection"
            ) from exc
        except Exception as exc:
            mapped = openai_error(exc)
            if mapped is None:
                raise
            raise mapped from exc
        return ChatResponse(message=dict(msg), finish_reason=finish)


class _NamedModel:
    """A :class:`ModelClient` that always asks for one model (the ``OpenAIChatAPI``'s)."""

    def __init__(self, client: ModelClient, model: str) -> None:
        self.client = client
        self.model = model

    async def chat(
        self,
        model: str,
        messages: list[Message],
        sampling_args: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatResponse:
        return await self.client.chat(self.model, messages, sampling_args, tools)


def chat_api_client(api: ChatAPI) -> ModelClient:
    """The model client driving ``api``: an ``OpenAIChatAPI``'s own endpoint through the async
    :class:`ChatClient`, any other API through :class:`ChatAPIClient`."""
    if isinstance(api, OpenAIChatAPI) and api.async_client is not None:
        return _NamedModel(api.async_client, api.model)
    return ChatAPIClient(api)


def clean_messages(messages: list[Message]) -> list[Message]:
    """The messages as a chat API's schema accepts them (bookkeeping keys dropped)."""
    return [{k: m[k] for k in _MESSAGE_KEYS if k in m} for m in messages]
