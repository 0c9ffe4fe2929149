"""The records a run passes along: stop reasons, the output row's columns, and the typed shapes
of a rollout input, a rollout's state and its output row."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from verifiers_lite.messages import Messages

StopReason = Literal["stop", "length", "max_turns", "env_done", "error"]

STOP_REASONS: tuple[str, ...] = ("stop", "length", "max_turns", "env_done", "error")
"""Why a rollout (or a token-engine trajectory) ended; the closed set every engine uses.

- ``stop``: the model answered and nothing asked for more (no tool call; a natural end).
- ``length``: a token limit ended it (``max_tokens``, or ``max_trajectory_tokens``).
- ``max_turns``: the turn budget ran out while the model still wanted to go on.
- ``env_done``: the environment ended it (its ``is_completed`` said so).
- ``error``: it failed; the row's ``error`` says why (model API, tools, template, prompt too
  long, scoring); other rollouts are unaffected.
"""

_TRUNCATING = frozenset({"length", "max_turns"})


def is_truncated(stop_reason: str) -> bool:
    """True exactly when a limit cut the rollout short (``length``, ``max_turns``); a natural
    end is complete and ``error`` is a failure, not a truncation."""
    if stop_reason not in STOP_REASONS:
        raise ValueError(f"unknown stop_reason {stop_reason!r}; expected one of {', '.join(STOP_REASONS)}")
    return stop_reason in _TRUNCATING


ROW_KEYS: tuple[str, ...] = (
    "example_id", "rollout_index", "trajectory_id", "task", "prompt", "completion", "answer",
    "info", "reward", "metrics", "advantage", "turns", "stop_reason", "error", "timing", "usage",
)
"""Keys of every output row, in DataFrame column order (nested ones are expanded there)."""

TOKEN_KEYS: tuple[str, ...] = ("prompt_ids", "completion_ids", "completion_mask", "completion_logprobs")
"""Keys a row carries when the backend returned token ids (training data)."""


class RolloutInput(TypedDict, total=False):
    """One task to roll out (a formatted dataset row); any other key joins ``info``."""

    prompt: Messages  #: the chat messages the model sees first (required)
    question: str  #: the raw question, when the dataset had one
    answer: str  #: the reference answer reward functions compare with ("" if none)
    info: dict[str, Any]  #: per-example data for reward functions (extra columns land here)
    task: str  #: which task (environment) of a group it belongs to ("default")
    example_id: int  #: the dataset row it came from; rollouts of one example share it
    seed: int  #: the rollout's sampling seed (set by the run from its seed)


class TokenFields(TypedDict):
    """Token ids of a rollout, for training: environment-written tokens have mask 0."""

    prompt_ids: list[int]  #: the first prompt, tokenised
    completion_ids: list[int]  #: every token after it: model turns and the bridges between them
    completion_mask: list[int]  #: 1 on model-sampled tokens, 0 on environment-written ones
    completion_logprobs: list[float]  #: per completion token (0.0 where none was given)


class State(TypedDict, total=False):
    """The mutable workbench of one rollout; environments may add keys of their own."""

    prompt: Messages  #: the input's messages (validated)
    completion: Messages  #: what the model and the environment said after the prompt
    answer: str  #: the reference answer
    info: dict[str, Any]  #: per-example data (with the dataset's extra columns)
    task: str  #: the task name
    example_id: int  #: the dataset row
    rollout_index: int  #: which of the example's rollouts this is
    trajectory_id: str  #: unique id of this rollout
    model: str  #: the model name it was run against
    sampling_args: dict[str, Any]  #: sampling parameters sent with each model call
    tool_defs: list[dict[str, Any]] | None  #: OpenAI tool schemas offered to the model
    trajectory: list[dict[str, Any]]  #: one step per model call (finish_reason, message)
    turns: int  #: model calls made
    stop_reason: StopReason | None  #: why it ended (None while running)
    error: dict[str, Any] | None  #: the categorised failure (see ``errors``), None if none
    reward: float | None  #: the rubric's score; None when unscored or errored
    metrics: dict[str, float | None]  #: each reward function's value (None: it failed)
    advantage: float | None  #: reward minus the group mean; None when unscored
    usage: dict[str, int]  #: prompt_tokens, completion_tokens summed over turns
    timing: dict[str, float]  #: start (epoch s), generation_ms, scoring_ms, rollout_ms, total_ms
    prompt_ids: list[int]  #: see :class:`TokenFields` (only when the backend gave token ids)
    completion_ids: list[int]
    completion_mask: list[int]
    completion_logprobs: list[float]
    judge: dict[str, Any]  #: a judge rubric's raw answer and parsed score
    seed: int  #: the rollout's sampling seed, when seeded
    retries: int  #: reruns of a failed rollout before it was given up
    system_fingerprints: list[str]  #: distinct ``system_fingerprint`` values the server returned


class Row(TypedDict, total=False):
    """One finished rollout as stored and exported: :data:`ROW_KEYS`, plus token ids, ``judge``,
    ``seed``, ``attempts``, where it ran (``endpoint``, ``worker``) and what a re-score needs of
    its State (``finish_reasons`` or ``trajectory``, ``env_state``) when present."""

    example_id: int
    rollout_index: int
    trajectory_id: str
    task: str
    prompt: Messages
    completion: Messages
    answer: str
    info: dict[str, Any]
    reward: float | None
    metrics: dict[str, float | None]
    advantage: float | None
    turns: int
    stop_reason: StopReason | None
    error: dict[str, Any] | None
    timing: dict[str, float]
    usage: dict[str, int]
    prompt_ids: list[int]
    completion_ids: list[int]
    completion_mask: list[int]
    completion_logprobs: list[float]
    judge: dict[str, Any]
    seed: int
    attempts: int  #: how often the rollout was run (a resume reruns failed ones)
    endpoint: str
    worker: str
    system_fingerprints: list[str]  #: the server builds that answered (when it said)
    finish_reasons: list[str | None]  #: per model turn, when the turns are the completion's replies
    trajectory: list[dict[str, Any]]  #: the model turns, when they are not the completion's replies
    env_state: dict[str, Any]  #: JSON values the environment put on the State under keys of its own
