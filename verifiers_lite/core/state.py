"""State: the mutable workbench of one rollout, and its serialisation into an output row."""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast

from verifiers_lite.core import columns
from verifiers_lite.core.dataset import INPUT_FIELDS, RolloutInput, parse_info
from verifiers_lite.core.messages import messages_in_form, normalize_messages
from verifiers_lite.core.model_client import ChatResponse, TurnUsage
from verifiers_lite.core.records import (
    STOP_REASONS,
    TOKEN_KEYS,
    CallRequest,
    CallTiming,
    Row,
    State,
    TokenFields,
    Usage,
)
from verifiers_lite.core.trajectory import (
    BRANCHED_CALLS,
    compact_calls,
    compact_steps,
    expand_calls,
    expand_steps,
)

ROW_KEYS = columns.ROW_KEYS
__all__ = [
    "ROW_KEYS",
    "STOP_REASONS",
    "TOKEN_KEYS",
    "State",
    "add_usage",
    "elapsed_ms",
    "extend_tokens",
    "new_state",
    "record_response",
    "row_to_state",
    "state_to_row",
]
# Keys the framework itself puts on a state or row (the typed ones): never taken for extra
# dataset columns, never kept as the environment's own.
_STATE_KEYS = frozenset(State.__annotations__) | frozenset(Row.__annotations__)
_NOT_ENV_KEYS = _STATE_KEYS | frozenset(INPUT_FIELDS)  # what is left is the environment's own


_ATOMS = (str, int, float, bool, type(None))
_ATOM_TYPES = frozenset(_ATOMS)


def copy_json(value: Any) -> Any:
    """Deep copy for JSON-like data (dicts, lists, scalars), several times cheaper than
    ``copy.deepcopy`` on the hot path; anything else falls back to ``copy.deepcopy``."""
    if isinstance(value, _ATOMS):
        return value
    # atoms are taken inline (most values of a row): no call per string or number
    if type(value) is dict:
        return {k: v if type(v) in _ATOM_TYPES else copy_json(v) for k, v in value.items()}
    if type(value) is list:
        return [v if type(v) in _ATOM_TYPES else copy_json(v) for v in value]
    return copy.deepcopy(value)


def new_state(
    rollout_input: RolloutInput,
    *,
    model: str,
    sampling_args: dict[str, Any] | None,
    tool_defs: list[dict[str, Any]] | None,
    rollout_index: int = 0,
) -> State:
    """Deep-copy the input and lay out an empty workbench (see ``Environment.init_state``)."""
    data = copy_json(dict(rollout_input))
    where = f"example {data.get('example_id', '?')}"
    if "prompt" not in data:
        raise ValueError(f"{where}: rollout input has no 'prompt'")
    info = parse_info(data.get("info"), where)
    # Inputs given straight to generate(): other columns join info as in a formatted dataset
    # (a clash is refused there; here, mid-run, info's own value wins).
    info = {
        **{k: v for k, v in data.items() if k not in INPUT_FIELDS and k not in _STATE_KEYS},
        **info,
    }
    resolved_tools = info.get("tool_defs", tool_defs)
    return {
        **data,
        # the copy's messages are the state's own: checked in place when already in form
        "prompt": prompt
        if messages_in_form(prompt := data["prompt"], f"{where}, field 'prompt'")
        else normalize_messages(prompt, f"{where}, field 'prompt'"),
        "answer": data.get("answer", ""),
        "info": info,
        "task": data.get("task", "default"),
        "example_id": data.get("example_id", 0),
        "rollout_index": rollout_index,
        "model": model,
        "sampling_args": dict(sampling_args or {}),
        "tool_defs": copy_json(resolved_tools) if resolved_tools else None,
        "completion": [],
        "trajectory": [],
        "turns": 0,
        "stop_reason": None,
        "error": None,
        "reward": None,
        "metrics": {},
        "advantage": None,
        "usage": {"prompt_tokens": 0, "completion_tokens": 0},
        "timing": {
            "start": time.time(),
            "queue_ms": 0.0,
            "generation_ms": 0.0,
            "env_ms": 0.0,
            "scoring_ms": 0.0,
            "rollout_ms": 0.0,
            "total_ms": 0.0,
        },
        "trajectory_id": _uuid4_hex(),
    }


def _uuid4_hex() -> str:
    """``uuid.uuid4().hex`` without building the UUID object (a measurable part of a rollout's
    CPU): 16 random bytes with the version 4 and RFC 4122 variant bits set."""
    value = int.from_bytes(os.urandom(16), "big")
    value = (value & ~(0xC000 << 48) | 0x8000 << 48) & ~(0xF000 << 64) | 4 << 76
    return f"{value:032x}"


def elapsed_ms(state: State) -> float:
    """Milliseconds since the rollout started (``timing.start``): where a step lies on its
    timeline."""
    start = state.get("timing", {}).get("start")
    return round((time.time() - start) * 1000, 3) if start else 0.0


def record_response(
    state: State,
    response: ChatResponse,
    request: CallRequest | None = None,
    timing: CallTiming | None = None,
) -> None:
    """Account one model turn: usage, its trajectory step (what was sent, the answer, the model
    that answered, the call's usage and times), and token ids when the backend gives them."""
    add_usage(state["usage"], response.usage)
    # the next call's prompt holds at least this one's prompt and answer (per-rollout limits)
    state["last_call_tokens"] = response.usage.prompt_tokens + response.usage.completion_tokens
    step: dict[str, Any] = {"finish_reason": response.finish_reason, "message": response.message}
    if request is not None:
        step["request"] = request
    if response.model:
        step["model"] = response.model
    usage = response.usage
    step["usage"] = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
    }
    if usage.reasoning_tokens:
        step["usage"]["reasoning_tokens"] = usage.reasoning_tokens
    if timing is not None:
        step["timing"] = timing
    state["trajectory"].append(step)
    build = response.system_fingerprint
    if build:
        seen = state.setdefault("system_fingerprints", [])
        if build not in seen:
            seen.append(build)
    served = response.model
    if served and served != state.get("model"):  # another model answered than the one asked
        answered = state.setdefault("served_models", [])
        if served not in answered:
            answered.append(served)
    if response.completion_ids is None:
        return
    # The turn's tokens as the sampler saw and returned them: the merge below keeps only their
    # join, these let a validator check it (each prompt extends the last, masks, logprobs).
    step["tokens"] = {
        "prompt_ids": response.prompt_ids or [],
        "completion_ids": response.completion_ids,
        "completion_logprobs": response.completion_logprobs,
    }
    tokens = extend_tokens(
        _tokens_of(state),
        response.prompt_ids or [],
        response.completion_ids,
        response.completion_logprobs,
    )
    state.update(tokens)


def add_usage(usage: Usage, turn: TurnUsage) -> None:
    """Add one turn's counts to a rollout's ``usage`` (reasoning and cached tokens, and a
    provider's extra fields, only once a server has reported them)."""
    usage["prompt_tokens"] = usage.get("prompt_tokens", 0) + turn.prompt_tokens
    usage["completion_tokens"] = usage.get("completion_tokens", 0) + turn.completion_tokens
    if turn.reasoning_tokens:
        usage["reasoning_tokens"] = usage.get("reasoning_tokens", 0) + turn.reasoning_tokens
    if turn.cached_prompt_tokens:
        usage["cached_prompt_tokens"] = (
            usage.get("cached_prompt_tokens", 0) + turn.cached_prompt_tokens
        )
    if turn.extra:
        extra = usage.setdefault("extra", {})
        for key, value in turn.extra.items():
            extra[key] = extra.get(key, 0) + value


def _tokens_of(state: State) -> TokenFields | None:
    if "prompt_ids" not in state:
        return None
    return {
        "prompt_ids": state["prompt_ids"],
        "completion_ids": state["completion_ids"],
        "completion_mask": state["completion_mask"],
        "completion_logprobs": state["completion_logprobs"],
    }


def extend_tokens(
    tokens: TokenFields | None,
    prompt_ids: Sequence[int],
    completion_ids: Sequence[int],
    logprobs: Sequence[float] | None,
) -> TokenFields:
    """Add one model turn to a rollout's token ids (``tokens`` None for the first turn; its lists
    are extended in place). The turn's prompt must extend everything so far (previous prompt +
    completion): ValueError otherwise, since splicing a re-tokenised prompt would corrupt the
    training data. Its new part was written by the environment (tool/user turns, bridge
    tokens): kept, masked out (0). Missing logprobs are 0.0."""
    n = len(completion_ids)
    lps = [float(x) for x in logprobs] if logprobs is not None and len(logprobs) == n else [0.0] * n
    if tokens is None:
        return {
            "prompt_ids": list(prompt_ids),
            "completion_ids": list(completion_ids),
            "completion_mask": [1] * n,
            "completion_logprobs": lps,
        }
    head, done = tokens["prompt_ids"], tokens["completion_ids"]
    seen = len(head) + len(done)
    if list(prompt_ids[: len(head)]) != head or list(prompt_ids[len(head) : seen]) != done:
        raise ValueError(
            "a turn's prompt_ids do not extend the previous turns' tokens (the backend re-tokenised "
            "the conversation, e.g. a chat template that drops earlier reasoning); token ids for "
            "training need a prompt that only grows"
        )
    bridge = list(prompt_ids[seen:])
    tokens["completion_ids"].extend([*bridge, *completion_ids])
    tokens["completion_mask"].extend([0] * len(bridge) + [1] * n)
    tokens["completion_logprobs"].extend([0.0] * len(bridge) + lps)
    return tokens


def state_to_row(state: State) -> Row:
    """The JSON-serialisable output row of a finished rollout. An unscored rollout (errored, or
    run without scoring) keeps reward and advantage None: missing, never a made-up 0.

    What a reward function may read from the State is kept, so a re-score sees what the first
    scoring saw (:func:`row_to_state`): the trajectory, every model call's request stored as its
    new messages only (a program's calls too), and the JSON values an environment put on the State under keys of its
    own (``env_state``)."""
    fields: Mapping[str, Any] = state  # read by name, key by key
    layout = columns.current()
    row: dict[str, Any] = {k: fields.get(k) for k in layout.row_keys}
    reward, advantage = state.get("reward"), state.get("advantage")
    row["reward"] = float(reward) if reward is not None else None
    row["advantage"] = float(advantage) if advantage is not None else None
    row["metrics"] = dict(state.get("metrics") or {})
    # Token ids, a judge's raw answer, the sampling seed, server builds: when the State has them.
    for k in layout.optional_row_keys:
        if k in fields:
            row[k] = fields[k]
    trajectory = state.get("trajectory")
    if trajectory:
        _keep_trajectory(row, trajectory, state.get("completion") or [])
    own = state.keys() - _NOT_ENV_KEYS - layout.written_keys
    if own:
        kept = {k: fields[k] for k in own if _is_json(fields[k])}
        if isinstance(kept.get(BRANCHED_CALLS), list):  # a program's calls: new messages only
            kept[BRANCHED_CALLS] = compact_calls(kept[BRANCHED_CALLS])
        if kept:
            row["env_state"] = kept
    return cast(Row, row)  # laid out key by key from the State's fields, as Row declares them


def _keep_trajectory(
    row: dict[str, Any], trajectory: list[dict[str, Any]], completion: list[Any]
) -> None:
    """The trajectory as stored: each request's new messages only, each answer left out when
    it is the completion's reply (:func:`~verifiers_lite.core.trajectory.compact_steps`)."""
    row["trajectory"] = compact_steps(row.get("prompt"), completion, trajectory)


def row_to_state(
    row: Row,
    *,
    model: str,
    sampling_args: dict[str, Any] | None,
    tool_defs: list[dict[str, Any]] | None = None,
) -> State:
    """The State a saved row was made from, ready to score again: its fields, the trajectory
    rebuilt, the environment's own keys back at the top level, the rollout's tools (its info's
    ``tool_defs``, else ``tool_defs``) and no scores (reward, advantage, metrics, a judge's
    answer cleared). The row's error is kept, except a ``rubric_error`` (the old rubric's)."""
    data = copy_json(dict(row))
    env_state = data.pop("env_state", None) or {}
    if isinstance(env_state.get(BRANCHED_CALLS), list):
        env_state[BRANCHED_CALLS] = expand_calls(env_state[BRANCHED_CALLS])
    finish_reasons = data.pop("finish_reasons", None)
    stored = data.pop("trajectory", None)
    if stored is None:  # an older row: the finish reasons of the completion's replies
        replies = [
            m
            for m in data.get("completion") or []
            if isinstance(m, dict) and m.get("role") == "assistant"
        ]
        trajectory = [
            {"finish_reason": f, "message": m}
            for f, m in zip(finish_reasons or [], replies, strict=False)
        ]
    else:
        trajectory = expand_steps(data.get("prompt"), data.get("completion"), stored)
    info = data.get("info") or {}
    resolved_tools = info.get("tool_defs", tool_defs) if isinstance(info, dict) else tool_defs
    state = {**env_state, **data}
    state.update(
        model=model,
        sampling_args=dict(sampling_args or {}),
        trajectory=trajectory,
        tool_defs=copy_json(resolved_tools) if resolved_tools else None,
        reward=None,
        advantage=None,
        metrics={},
    )
    state.pop("judge", None)
    state.pop("explanations", None)
    if (state.get("error") or {}).get("category") == "rubric_error":
        state["error"] = None
    return state  # type: ignore[return-value]  # a row's keys are State keys


def _is_json(value: Any, depth: int = 0) -> bool:
    """JSON-native (dicts with str keys, lists, scalars), so a row keeps it exactly."""
    if isinstance(value, _ATOMS):
        return not isinstance(value, float) or value == value  # NaN does not round-trip as JSON
    if depth > 20:
        return False
    if type(value) is list:
        return all(_is_json(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(isinstance(k, str) and _is_json(v, depth + 1) for k, v in value.items())
    return False
