"""``TokenClient``: a token-level sampler behind the Environment's ``ModelClient`` interface.

An Environment (MultiTurnEnv, ToolEnv) talks messages; RL training needs the exact token ids.
This client renders messages with the model's template, keeps each conversation's ids verbatim
across turns (a new turn's prompt is the previous prompt + sampled ids + template bridge, never a
re-tokenisation of the model's text), and returns ``prompt_ids``/``completion_ids``/
``completion_logprobs`` in each :class:`ChatResponse`. Concurrent ``chat`` calls are gathered
into one batched ``sampler.sample`` call.
"""

from __future__ import annotations

import asyncio
import copy
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from verifiers_lite.core.messages import Message
from verifiers_lite.core.model_client import ChatResponse, TurnUsage
from verifiers_lite.core.reasoning import reasoning_of, split_think

from .sampling import Sampler, SampleResult, SamplingParams, sample_isolated
from .template import TEXT_ONLY, Template
from .tool_manager import HermesToolParser

__all__ = ["TokenClient"]


@dataclass(slots=True)
class _Conversation:
    messages: list[Message]  # ends with the assistant message we returned
    ids: list[int]  # prompt + sampled ids
    sampled: list[int]


def _key(m: Message) -> tuple[Any, ...]:
    # Envs may add bookkeeping keys to messages; identity is role, text and the tool call link.
    # A sampled turn whose inline reasoning the environment moved to ``reasoning_content`` is
    # still the turn sampled: both read as (reasoning, answer).
    content = m.get("content") or ""
    if m.get("role") == "assistant" and isinstance(content, str):
        reasoning = reasoning_of(m)
        return (
            "assistant",
            *((reasoning, content) if reasoning is not None else split_think(content)),
        )
    return (m.get("role"), content, m.get("tool_call_id"))


class TokenClient:
    """``ModelClient`` over a token-level :class:`Sampler` (vLLM, llama.cpp, ...).

    ``model`` in ``chat`` is ignored (the sampler holds one model). ``sampling_params`` are the
    defaults, overridden per call by OpenAI-style ``sampling_args``; logprobs of the sampled
    tokens are returned by default because training needs them. Its chat template renders text:
    a run refuses a prompt with an image before its first request (``text_only``).
    """

    text_only = TEXT_ONLY

    def __init__(
        self,
        sampler: Sampler,
        template: Template,
        sampling_params: SamplingParams | None = None,
        parser: HermesToolParser | None = None,
        max_conversations: int = 10_000,
        batch_window_s: float = 0.002,
    ) -> None:
        self.sampler = sampler
        self.template = template
        self.sampling_params = sampling_params or SamplingParams(logprobs=0)
        self.parser = parser or HermesToolParser()
        self.max_conversations = max_conversations
        self.batch_window_s = batch_window_s
        self._convs: OrderedDict[int, _Conversation] = OrderedDict()
        self._next = 0
        self._queue: list[tuple[list[int], SamplingParams, asyncio.Future[SampleResult]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self.sample_calls = 0  # how many batched sampler calls were made

    # -- prompt ids -----------------------------------------------------------------------
    def prompt_ids(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None
    ) -> list[int]:
        """Ids for the next turn: a known conversation's ids + bridge, else a fresh render."""
        keys = [_key(m) for m in messages]
        best: _Conversation | None = None
        for conv in self._convs.values():
            n = len(conv.messages)
            if (
                n <= len(messages)
                and (best is None or n > len(best.messages))
                and keys[:n] == [_key(m) for m in conv.messages]
            ):
                best = conv
        if best is None:
            return self.template.encode_messages(messages, tools, add_generation_prompt=True)
        n = len(best.messages)
        bridge = self.template.bridge_ids(messages[: n - 1], messages[n:], best.sampled, tools)
        return best.ids + bridge

    def _remember(self, messages: list[Message], ids: list[int], sampled: list[int]) -> None:
        self._convs[self._next] = _Conversation(messages, ids, sampled)
        self._next += 1
        while len(self._convs) > self.max_conversations:
            self._convs.popitem(last=False)

    # -- batching -------------------------------------------------------------------------
    async def _sample(self, prompt: list[int], params: SamplingParams) -> SampleResult:
        fut: asyncio.Future[SampleResult] = asyncio.get_running_loop().create_future()
        self._queue.append((prompt, params, fut))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await fut

    async def _flush(self) -> None:
        # Wait a moment so chats issued together (one turn of many rollouts) share one batch.
        await asyncio.sleep(self.batch_window_s)
        while self._queue:
            batch, self._queue = self._queue, []
            self.sample_calls += 1
            # One prompt's failure (e.g. too long for the context) fails only its own chat.
            results = await asyncio.to_thread(
                sample_isolated, self.sampler, [b[0] for b in batch], [b[1] for b in batch]
            )
            for (_, _, fut), res in zip(batch, results, strict=True):
                if fut.done():
                    continue
                if isinstance(res, Exception):
                    fut.set_exception(res)
                else:
                    fut.set_result(res)

    # -- ModelClient ----------------------------------------------------------------------
    async def chat(
        self,
        model: str,
        messages: list[Message],
        sampling_args: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatResponse:
        """Sample one assistant turn; tool calls parsed into OpenAI ``tool_calls`` with ids."""
        params = self.sampling_params.with_sampling_args(sampling_args)
        params = params.replace(
            stop_token_ids=tuple(
                dict.fromkeys((*params.stop_token_ids, *self.template.stop_token_ids))
            )
        )
        prompt = self.prompt_ids(messages, tools)
        res = await self._sample(prompt, params)
        sampled = list(res.token_ids)
        body = sampled[:-1] if sampled and sampled[-1] in self.template.stop_token_ids else sampled
        text = self.template.decode(body)
        message: Message = {"role": "assistant", "content": text}
        finish = res.finish_reason
        if tools and finish != "length":
            calls = self.parser.parse(text).calls
            if calls:
                message["tool_calls"] = [c.to_openai() for c in calls]
                finish = "tool_calls"  # type: ignore[assignment]
        self._remember(
            [*copy.deepcopy(messages), copy.deepcopy(message)], prompt + sampled, sampled
        )
        return ChatResponse(
            message=message,
            finish_reason=finish,
            usage=TurnUsage(prompt_tokens=len(prompt), completion_tokens=len(sampled)),
            prompt_ids=prompt,
            completion_ids=sampled,
            completion_logprobs=res.logprobs,
        )
