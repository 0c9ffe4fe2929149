"""A program's model calls as a rollout records them: one step per call, grouped in branches.

A step is a :class:`~verifiers_lite.core.records.TrajectoryStep` (request, answer, finish
reason, served model, usage, timing, token ids) with the call's ``branch``, ``dialect``,
``stream`` and ``program_model`` (the model name the program asked for).

Consecutive calls that extend one conversation (each call's messages begin with the previous
call's messages and its answer) form one branch. A call whose history matches no branch so far
(the program summarised its history, or started a sub-agent) starts a new branch. With a token
backend a call also extends a branch only when its prompt ids extend the branch's ids, so each
branch is one training sequence: :func:`branch_rows` gives one training row per branch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from verifiers_lite.core.messages import Message
from verifiers_lite.core.model_client import ChatResponse
from verifiers_lite.core.records import Row
from verifiers_lite.core.state import copy_json, extend_tokens
from verifiers_lite.core.trajectory import BRANCHED_CALLS, expand_calls

__all__ = ["CallLog", "branch_rows"]


def _same(a: Message, b: Message) -> bool:
    """Two messages are one turn: same role, content and tool call link (the SDKs re-send an
    assistant message with fields of their own, e.g. ``refusal: null``)."""
    if a.get("role") != b.get("role") or a.get("tool_call_id") != b.get("tool_call_id"):
        return False
    if (a.get("content") or "") != (b.get("content") or ""):
        return False
    names_a = [c.get("function", {}).get("name") for c in a.get("tool_calls") or []]
    names_b = [c.get("function", {}).get("name") for c in b.get("tool_calls") or []]
    return names_a == names_b


@dataclass
class _Branch:
    conversation: list[Message]  # the last call's messages + its answer
    tokens: Any = None  # TokenFields of the branch when the backend gives ids
    steps: list[int] = field(default_factory=list)


@dataclass
class CallLog:
    """The calls of one rollout, in the order they were answered."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    branches: list[_Branch] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def record(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]] | None,
        sampling_args: dict[str, Any],
        response: ChatResponse,
        meta: dict[str, Any],
    ) -> dict[str, Any]:
        """Add one answered call; returns its step."""
        branch = self._branch_for(messages, response)
        self.prompt_tokens += response.usage.prompt_tokens
        self.completion_tokens += response.usage.completion_tokens
        step: dict[str, Any] = {
            "call": len(self.steps),
            "branch": branch,
            **meta,
            "request": {
                "messages": copy_json(messages),
                "tools": copy_json(tools),
                "sampling_args": dict(sampling_args),
            },
            "message": copy_json(response.message),
            "finish_reason": response.finish_reason,
            "model": response.model,
            "usage": {
                "prompt_tokens": response.usage.prompt_tokens,
                "completion_tokens": response.usage.completion_tokens,
            },
        }
        if response.completion_ids is not None:
            step["tokens"] = {
                "prompt_ids": list(response.prompt_ids or []),
                "completion_ids": list(response.completion_ids),
                "completion_logprobs": list(response.completion_logprobs or []),
            }
        self.steps.append(step)
        self.branches[branch].steps.append(step["call"])
        return step

    def _branch_for(self, messages: list[Message], response: ChatResponse) -> int:
        """The branch this call extends (the latest one it extends), else a new one."""
        for index in range(len(self.branches) - 1, -1, -1):
            branch = self.branches[index]
            seen = branch.conversation
            if len(messages) <= len(seen) or not all(
                _same(a, b) for a, b in zip(seen, messages, strict=False)
            ):
                continue
            if response.completion_ids is not None:
                try:
                    branch.tokens = extend_tokens(
                        copy_json(branch.tokens),
                        response.prompt_ids or [],
                        response.completion_ids,
                        response.completion_logprobs,
                    )
                except ValueError:  # re-tokenised history: a sequence of its own
                    continue
            branch.conversation = [*messages, response.message]
            return index
        tokens = None
        if response.completion_ids is not None:
            tokens = extend_tokens(
                None,
                response.prompt_ids or [],
                response.completion_ids,
                response.completion_logprobs,
            )
        self.branches.append(_Branch([*messages, response.message], tokens))
        return len(self.branches) - 1

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def main_branch(self) -> int | None:
        """The branch of the last call (the conversation the program ended on)."""
        return self.steps[-1]["branch"] if self.steps else None

    def branch_tokens(self, branch: int) -> Any:
        return self.branches[branch].tokens

    def branch_conversation(self, branch: int) -> list[Message]:
        return self.branches[branch].conversation


def branch_rows(rows: Any) -> list[Row]:
    """One training row per branch of each program rollout (rows of other environments as they
    are): each holds its branch's token ids (``prompt_ids``, ``completion_ids``, mask, logprobs),
    its steps as ``trajectory`` and the rollout's reward and advantage, and ``branch`` its number.
    Rows without token ids per call are left out."""
    out: list[Row] = []
    for row in rows:
        env_state = row.get("env_state") or {}
        stored = env_state.get(BRANCHED_CALLS)
        if not isinstance(stored, list):
            out.append(row)
            continue
        calls = expand_calls(stored)
        by_branch: dict[int, list[dict[str, Any]]] = {}
        for step in calls:
            by_branch.setdefault(int(step["branch"]), []).append(step)
        for branch, steps in sorted(by_branch.items()):
            if not all(s.get("tokens") for s in steps):
                continue
            tokens = None
            for s in steps:
                t = s["tokens"]
                tokens = extend_tokens(
                    tokens, t["prompt_ids"], t["completion_ids"], t["completion_logprobs"]
                )
            derived = {
                k: row.get(k)
                for k in ("example_id", "task", "rollout_index", "reward", "advantage", "prompt")
            }
            derived.update(copy_json(tokens))
            derived["trajectory"] = [
                {
                    "finish_reason": s.get("finish_reason"),
                    "message": s["message"],
                    "tokens": s["tokens"],
                }
                for s in steps
            ]
            derived["branch"] = branch
            out.append(cast(Row, derived))
    return out
