"""ScriptedClient: a model that answers from a script, to check an environment without a model.

An ordinary :class:`~verifiers_lite.core.model_client.ModelClient`: pass it wherever a client goes
(``evaluate``, ``generate``, grouped or independent runs, tool environments). A perfect script
must reach the environment's maximal reward; if it does not, the environment is wrong, not the
model.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Sequence
from typing import Any

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.clients.model_turn import ModelTurn, current_model_turn
from verifiers_lite.core.messages import Message
from verifiers_lite.core.model_client import ChatResponse, TurnUsage

Reply = str | dict[str, Any] | ChatResponse
ToolCallSpec = dict[str, Any]
Script = Reply | Sequence[Reply] | Callable[[list[Message]], Any]
ToolScript = Sequence[Sequence[ToolCallSpec] | None] | Callable[[list[Message]], Any] | None


class ScriptExhaustedError(VerifiersError, ValueError):
    """The script has no reply for this turn (recorded on the rollout's row as ``env_error``)."""


class ScriptedClient:
    """Answers each model call from ``replies``.

    ``replies`` is one of:

    - a string: the same reply on every turn;
    - a list: the script of every rollout, model turn by model turn (turn *i* is the
      rollout's *i*-th model call: few-shot examples and any other assistant message in the
      prompt never count, and concurrent rollouts each follow it from the start); a turn past
      the end is an error row naming the rollout's turn and its ``max_turns``;
    - a function ``fn(messages) -> reply`` (sync or async), for replies that depend on the
      prompt, e.g. computing the right answer.

    A reply is a string (the content), an assistant message dict (``content``, ``tool_calls``;
    an extra ``finish_reason`` key, e.g. ``"length"``, sets the finish reason), or a
    :class:`ChatResponse`. ``tool_calls`` scripts tool calls the same way (a list by turn, or a
    function of the messages); a call is ``{"name": ..., "arguments": {...}}`` or an OpenAI
    ``tool_call`` dict. ``delay`` (seconds) makes each reply take that long, like a slow model.
    ``requests`` counts the calls made.

    Args:
        replies: the replies (above): a string, a list by turn, or a function of the messages.
        tool_calls: the tool calls each reply makes (above): a list by turn or a function of the
            messages.
        delay: seconds each reply takes.
    """

    def __init__(
        self, replies: Script, *, tool_calls: ToolScript = None, delay: float = 0.0
    ) -> None:
        if not (
            isinstance(replies, (str, dict, ChatResponse))
            or callable(replies)
            or isinstance(replies, Sequence)
        ):
            raise TypeError(
                f"replies must be a string, a list of replies or a function of the messages; "
                f"got {type(replies).__name__}"
            )
        if isinstance(replies, Sequence) and not isinstance(replies, (str, dict)) and not replies:
            raise ValueError("replies is an empty list: give at least one reply")
        if tool_calls is not None and not (
            callable(tool_calls) or isinstance(tool_calls, Sequence)
        ):
            raise TypeError(
                f"tool_calls must be a list (one entry per turn) or a function of the messages; "
                f"got {type(tool_calls).__name__}"
            )
        if delay < 0:
            raise ValueError(f"delay must be >= 0 seconds, got {delay}")
        self.replies = replies
        self.tool_calls = tool_calls
        self.delay = delay
        self.requests = 0

    async def chat(
        self,
        model: str,
        messages: list[Message],
        sampling_args: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatResponse:
        """The scripted reply for this turn of ``messages``."""
        self.requests += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        rollout_turn = current_model_turn()
        turn = rollout_turn.index if rollout_turn is not None else _turn_outside_rollout(messages)
        reply = await _pick(self.replies, messages, turn, "replies", rollout_turn)
        calls = (
            await _pick(self.tool_calls, messages, turn, "tool_calls", rollout_turn)
            if self.tool_calls is not None
            else None
        )
        response = _to_response(reply, turn)
        if calls:
            response.message["tool_calls"] = [_tool_call(c, turn, j) for j, c in enumerate(calls)]
            if response.finish_reason == "stop":
                response.finish_reason = "tool_calls"
        response.usage = TurnUsage(
            prompt_tokens=sum(len(str(m.get("content") or "").split()) for m in messages),
            completion_tokens=len(response.content.split()),
        )
        return response

    def __repr__(self) -> str:
        kind = "function" if callable(self.replies) else type(self.replies).__name__
        return f"ScriptedClient({kind} script, requests={self.requests})"


def _turn_outside_rollout(messages: list[Message]) -> int:
    """A call made outside a rollout's model turn (a judge, a direct ``chat``): the turn is
    the assistant messages already in the conversation."""
    return sum(1 for m in messages if m.get("role") == "assistant")


async def _pick(
    script: Any, messages: list[Message], turn: int, what: str, rollout_turn: ModelTurn | None
) -> Any:
    if callable(script):
        value = script(messages)
        return await value if inspect.isawaitable(value) else value
    if isinstance(script, (str, dict, ChatResponse)):
        return script
    if turn >= len(script):
        raise ScriptExhaustedError(
            f"ScriptedClient: {what} has {len(script)} turn(s); {_asked(turn, rollout_turn)} "
            "(add turns to the script, or pass a function of the messages)"
        )
    return script[turn]


def _asked(turn: int, rollout_turn: ModelTurn | None) -> str:
    if rollout_turn is None:
        return f"asked for turn {turn + 1} (a call outside a rollout: its conversation's assistant messages + 1)"
    budget = (
        "no max_turns" if rollout_turn.max_turns is None else f"max_turns={rollout_turn.max_turns}"
    )
    return f"the rollout asked for its model turn {turn + 1} ({budget}; few-shot and prompt messages do not count)"


def _to_response(reply: Any, turn: int) -> ChatResponse:
    if isinstance(reply, ChatResponse):
        return ChatResponse(
            dict(reply.message),
            reply.finish_reason,
            reply.usage,
            reply.prompt_ids,
            reply.completion_ids,
            reply.completion_logprobs,
        )
    if reply is None:
        reply = ""
    if isinstance(reply, str):
        return ChatResponse({"role": "assistant", "content": reply})
    if isinstance(reply, dict):
        message = {k: v for k, v in reply.items() if k != "finish_reason"}
        message.setdefault("role", "assistant")
        message.setdefault("content", "")
        if message.get("tool_calls"):
            message["tool_calls"] = [
                _tool_call(c, turn, j) for j, c in enumerate(message["tool_calls"])
            ]
        finish = reply.get("finish_reason") or (
            "tool_calls" if message.get("tool_calls") else "stop"
        )
        return ChatResponse(message, finish)
    raise TypeError(
        f"ScriptedClient: a reply must be a string, a message dict or a ChatResponse; "
        f"the script gave {type(reply).__name__} for turn {turn + 1}"
    )


def _tool_call(call: Any, turn: int, j: int) -> dict[str, Any]:
    """``{"name", "arguments"}`` (or an OpenAI tool_call) as an OpenAI tool_call with an id."""
    if not isinstance(call, dict):
        raise TypeError(
            f"ScriptedClient: a tool call must be a dict, got {type(call).__name__} for turn {turn + 1}"
        )
    fn = call.get("function", call)
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"ScriptedClient: tool call {call!r} for turn {turn + 1} has no 'name'")
    args = fn.get("arguments", {})
    return {
        "id": call.get("id") or f"call_{turn}_{j}",
        "type": "function",
        "function": {
            "name": name,
            "arguments": args if isinstance(args, str) else json.dumps(args),
        },
    }
