"""State: the mutable workbench of one rollout, and its serialisation into an output row."""

from __future__ import annotations

import copy
import time
import uuid
from typing import Any

from verifiers_lite.clients.base import ChatResponse
from verifiers_lite.dataset import INPUT_FIELDS, RolloutInput, parse_info
from verifiers_lite.messages import normalize_messages

State = dict[str, Any]

STOP_REASONS = ("stop", "length", "max_turns", "env_done", "error")

# Keys of an output row, in DataFrame column order (metrics are expanded per function later).
ROW_KEYS = (
    "example_id", "rollout_index", "trajectory_id", "task", "prompt", "completion", "answer",
    "info", "reward", "metrics", "advantage", "turns", "stop_reason", "error", "timing", "usage",
)
TOKEN_KEYS = ("prompt_ids", "completion_ids", "completion_mask", "completion_logprobs")
# Keys the framework itself puts on a state or row: never taken for extra dataset columns.
_STATE_KEYS = frozenset((
    *ROW_KEYS, *TOKEN_KEYS, "model", "sampling_args", "tool_defs", "trajectory", "retries",
    "endpoint", "worker", "attempts", "judge", "seed",
))


_ATOMS = (str, int, float, bool, type(None))


def copy_json(value: Any) -> Any:
    """Deep copy for JSON-like data (dicts, lists, scalars), several times cheaper than
    ``copy.deepcopy`` on the hot path; anything else falls back to ``copy.deepcopy``."""
    if isinstance(value, _ATOMS):
        return value
    if type(value) is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if type(value) is list:
        return [copy_json(v) for v in value]
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
    info = {**{k: v for k, v in data.items() if k not in INPUT_FIELDS and k not in _STATE_KEYS}, **info}
    resolved_tools = info.get("tool_defs", tool_defs)
    return {
        **data,
        "prompt": normalize_messages(data["prompt"], f"{where}, field 'prompt'"),
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
        "timing": {"start": time.time(), "generation_ms": 0.0, "scoring_ms": 0.0, "total_ms": 0.0},
        "trajectory_id": uuid.uuid4().hex,
    }


def record_response(state: State, response: ChatResponse) -> None:
    """Account one model turn: usage, trajectory step, and token ids when the backend gives them."""
    state["usage"]["prompt_tokens"] += response.usage.prompt_tokens
    state["usage"]["completion_tokens"] += response.usage.completion_tokens
    state["trajectory"].append({"finish_reason": response.finish_reason, "message": response.message})
    if response.completion_ids is None:
        return
    prompt_ids = list(response.prompt_ids or [])
    logprobs = response.completion_logprobs
    n = len(response.completion_ids)
    if "prompt_ids" not in state:
        state["prompt_ids"] = prompt_ids
        state["completion_ids"], state["completion_mask"], state["completion_logprobs"] = [], [], []
    else:
        # Everything between the previous turn's end and this prompt's end was written by the
        # environment (tool/user turns, bridge tokens): kept, but masked out of training.
        seen = len(state["prompt_ids"]) + len(state["completion_ids"])
        bridge = prompt_ids[seen:]
        state["completion_ids"].extend(bridge)
        state["completion_mask"].extend([0] * len(bridge))
        state["completion_logprobs"].extend([0.0] * len(bridge))
    state["completion_ids"].extend(response.completion_ids)
    state["completion_mask"].extend([1] * n)
    state["completion_logprobs"].extend(list(logprobs) if logprobs is not None else [0.0] * n)


def state_to_row(state: State) -> dict[str, Any]:
    """The JSON-serialisable output row of a finished rollout. An unscored rollout (errored, or
    run without scoring) keeps reward and advantage None: missing, never a made-up 0."""
    row = {k: state.get(k) for k in ROW_KEYS}
    row["reward"] = float(state["reward"]) if state.get("reward") is not None else None
    row["advantage"] = float(state["advantage"]) if state.get("advantage") is not None else None
    row["metrics"] = dict(state.get("metrics") or {})
    for k in (*TOKEN_KEYS, "judge", "seed"):  # a judge rubric's raw answer; the rollout's sampling seed
        if k in state:
            row[k] = state[k]
    return row
