"""The records a run passes along, one family of typed shapes: a rollout input, a rollout's
state, its output row (with its error, timing, usage and token ids) and the token engine's
trajectory; plus the closed sets of stop reasons and error categories.

The row is what the core returns (``GenerateOutputs.rows``), the results store writes (one JSON
object per line of ``results.jsonl``), the rollout server sends (``RolloutSample``) and
``build_training_batch`` reads. The shapes are TypedDicts: rows stay plain dicts at run time
(JSON in, JSON out), and the type checker knows their fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import (
    Annotated,
    Any,
    Literal,
    NotRequired,
    Required,
    TypedDict,
    get_args,
    get_type_hints,
)

from verifiers_lite.core.messages import Messages

StopReason = Literal[
    "stop",
    "length",
    "max_turns",
    "env_done",
    "error",
    "token_limit",
    "turn_limit",
    "time_limit",
    "cost_limit",
    "tool_limit",
]
"""Why a rollout (or a token-engine trajectory) ended; the closed set every engine uses.

- ``stop``: the model answered and nothing asked for more (no tool call; a natural end).
- ``length``: a token limit ended it (``max_tokens``, or ``max_trajectory_tokens``).
- ``max_turns``: the turn budget ran out while the model still wanted to go on.
- ``env_done``: the environment ended it (its ``is_completed`` said so).
- ``error``: it failed; the row's ``error`` says why (model API, tools, template, prompt too
  long, scoring); other rollouts are unaffected.
- ``token_limit``, ``turn_limit``, ``time_limit``, ``cost_limit``, ``tool_limit``: one of the
  rollout's :class:`~verifiers_lite.core.limits.Limits` ended it (scored as it stands, like a
  truncation).
"""

STOP_REASONS: tuple[StopReason, ...] = get_args(StopReason)
"""The stop reasons as a tuple (the closed set, in the order above)."""

_TRUNCATING = frozenset(
    {
        "length",
        "max_turns",
        "token_limit",
        "turn_limit",
        "time_limit",
        "cost_limit",
        "tool_limit",
    }
)


def is_truncated(stop_reason: str) -> bool:
    """True exactly when a limit cut the rollout short (``length``, ``max_turns``, ``timeout``,
    or one of its :class:`~verifiers_lite.core.limits.Limits`: ``token_limit``, ...); a natural
    end is complete and ``error`` is a failure, not a truncation."""
    if stop_reason not in STOP_REASONS:
        raise ValueError(
            f"unknown stop_reason {stop_reason!r}; expected one of {', '.join(STOP_REASONS)}"
        )
    return stop_reason in _TRUNCATING


ErrorCategory = Literal[
    "model_http_error",  # the endpoint answered 4xx/5xx (after retries where retryable)
    "model_rate_limited",  # 429 that outlived the retry budget
    "model_timeout",  # no answer within the per-request timeout
    "model_connection",  # connection refused / reset / dropped
    "model_crashed",  # the model server process died (signal/exit code and its output's tail)
    "model_bad_response",  # the endpoint answered something that is not a chat completion
    "env_error",  # the environment's own code raised (rollout, env_response, setup)
    "rollout_timeout",  # the whole rollout outlived the environment's rollout_timeout
    "rubric_error",  # a reward function raised
    "cancelled",  # the run was interrupted
    "remote_error",  # a remote rollout server reported a failure
    # The token engine refused a prompt with no room for one sampled token under its limits
    # (max_trajectory_tokens, the sampler's context window): refused rather than cut, since a
    # cut prompt has no trainable token; the model was never asked.
    "prompt_too_long",
]
"""Why a rollout failed: every failed row carries exactly one of these in ``error["category"]``."""

ERROR_CATEGORIES: tuple[ErrorCategory, ...] = get_args(ErrorCategory)
"""The error categories as a tuple (the closed set, in the order above)."""


class ErrorRecord(TypedDict):
    """A failed rollout's ``error`` (see :func:`verifiers_lite.core.errors.categorize`)."""

    category: ErrorCategory  #: which kind of failure (one of :data:`ERROR_CATEGORIES`)
    message: str  #: the exception's type and text (at most 2000 characters)
    #: where the author's code raised it: the stack from their own frames, the library's
    #: folded (:mod:`verifiers_lite.core.tracebacks`); absent when no frame was theirs
    traceback: NotRequired[str]
    #: the key the run stores that text under once (``tracebacks.jsonl`` in a saved run)
    traceback_id: NotRequired[str]


@dataclass(frozen=True)
class TimingPart:
    """Marks a :class:`Timing` key as one part of where a rollout's time went (the parts add up
    to ``total_ms``), with the name displays give it."""

    label: str


class Timing(TypedDict, total=False):
    """Where a rollout's time went (written by the run; a remote row may lack some keys)."""

    start: float  #: when the rollout started (epoch seconds)
    #: waiting for a request slot (``max_concurrent``, an endpoint's ``slots``), summed over turns
    queue_ms: Annotated[float, TimingPart("waiting for a request slot")]
    #: in the model requests (sent until answered, retries included), summed over turns
    generation_ms: Annotated[float, TimingPart("in the model request")]
    #: in the environment: the rollout's own steps and tools (rollout_ms less the two above)
    env_ms: Annotated[float, TimingPart("in the environment")]
    rollout_ms: float  #: the rollout itself: queue_ms + generation_ms + env_ms
    #: after its rollout, waiting for the group's other rollouts to end
    group_wait_ms: Annotated[float, TimingPart("waiting for its group")]
    #: the rubric's scoring (of the whole group)
    scoring_ms: Annotated[float, TimingPart("scoring")]
    total_ms: float  #: rollout, group wait, scoring and cleanup


_TIMING_HINTS = get_type_hints(Timing, include_extras=True)

TIMING_KEYS: tuple[str, ...] = tuple(k for k in _TIMING_HINTS if k != "start")
"""The durations of :class:`Timing` (milliseconds), in its order: a row's timing columns."""

TIMING_PARTS: tuple[tuple[str, str], ...] = tuple(
    (key, meta.label)
    for key, hint in _TIMING_HINTS.items()
    for meta in getattr(hint, "__metadata__", ())
    if isinstance(meta, TimingPart)
)
"""Where a rollout's time went, each part of :class:`Timing` by the name displays give it."""


class Usage(TypedDict, total=False):
    """Tokens the model server reported, summed over the rollout's turns."""

    prompt_tokens: int  #: prompt tokens, every turn's counted
    completion_tokens: int  #: tokens the model generated
    #: of those, the tokens spent reasoning (``completion_tokens_details.reasoning_tokens``);
    #: present only when the server reported them
    reasoning_tokens: int
    #: of the prompt tokens, those the provider served from its prompt cache
    #: (``prompt_tokens_details.cached_tokens``); present only when the server reported them
    cached_prompt_tokens: int
    #: any other numeric usage fields the server reported (a provider's own, nested ones named
    #: with dots, e.g. ``prompt_tokens_details.audio_tokens``), summed over the turns
    extra: dict[str, float]


USAGE_KEYS: tuple[str, ...] = tuple(k for k in Usage.__annotations__ if k != "extra")
"""The token counts of :class:`Usage`, in its order: a row's usage columns (``extra``, a
provider's own fields, stays a mapping)."""


DatasetRow = dict[str, Any]
"""A caller's dataset row, any columns: validated into a :class:`RolloutInput` before a run."""


class CallRequest(TypedDict, total=False):
    """What one model call sent."""

    #: the messages sent, whole (a stored row keeps the new ones only; ``model_calls`` rebuilds them)
    messages: Messages
    sampling_args: dict[str, Any]  #: the sampling parameters sent with it


class CallTiming(TypedDict, total=False):
    """When one model call ran, in milliseconds after the rollout's start."""

    start_ms: float  #: when the call began (its wait for a request slot included)
    queue_ms: float  #: waiting for a request slot (``max_concurrent``, an endpoint's ``slots``)
    latency_ms: float  #: the request itself: from sending it to the whole answer


class ToolCallRecord(TypedDict, total=False):
    """One tool call the environment answered, after the model call that asked for it."""

    id: str  #: the call's id, as the model wrote it (``call_<n>`` when it gave none)
    name: str | None  #: the tool's name, as the model wrote it
    arguments: Any  #: the arguments, as the model wrote them (usually a JSON string)
    result: str  #: the tool message sent back to the model
    #: the failure's kind (``unknown_tool``, ``bad_arguments``, ...), None when the tool ran
    error: str | None
    #: where the tool's own code raised (the author's frames, as an error's ``traceback``)
    traceback: str
    #: the key a saved run stores that text under once, as an error's ``traceback_id``
    traceback_id: str
    start_ms: float  #: when the call began, after the rollout's start
    duration_ms: float  #: how long the tool took


class EnvTiming(TypedDict):
    """The environment's turn after a model call (``env_response``: its tools included)."""

    start_ms: float  #: when it began, after the rollout's start
    duration_ms: float  #: how long it took


class TrajectoryStep(TypedDict, total=False):
    """One model call of a rollout (an entry of ``State["trajectory"]``): the request, the
    answer, its usage and times, and the tools it called. Rows from older runs may hold only
    ``finish_reason`` and ``message``."""

    request: CallRequest  #: what was sent
    message: dict[str, Any]  #: the answer: ``content``, ``reasoning_content``, ``tool_calls``
    finish_reason: str | None  #: why the model stopped (``stop``, ``length``, ``tool_calls``)
    model: str | None  #: the model id the server says answered (its response's ``model``)
    usage: Usage  #: this call's tokens
    timing: CallTiming  #: when it ran, its wait for a slot and its latency
    tool_calls: list[ToolCallRecord]  #: the tools it called, answered by the environment
    env: EnvTiming  #: the environment's turn that followed it, when one did
    #: the token ids the backend gave for this call (prompt, completion, logprobs)
    tokens: dict[str, Any]


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


TOKEN_KEYS: tuple[str, ...] = tuple(TokenFields.__annotations__)
"""Keys a row carries when the backend returned token ids (training data)."""


class RolloutFields(TypedDict, total=False):
    """What a rollout's State and its output Row both carry, under the same keys."""

    example_id: int  #: the dataset row it came from; rollouts of one example share it
    rollout_index: int  #: which of the example's rollouts this is (0-based)
    trajectory_id: str  #: unique id of this rollout
    task: str  #: the task (environment of a group) it belongs to
    prompt: Messages  #: the messages the model saw first (validated)
    #: what the model and the environment said after the prompt; an assistant turn's reasoning
    #: is under its ``reasoning_content`` key, never in its ``content``
    completion: Messages
    answer: str  #: the reference answer
    info: dict[str, Any]  #: per-example data (the dataset's extra columns)
    trajectory: list[dict[str, Any]]  #: one :class:`TrajectoryStep` per model call
    turns: int  #: model calls made
    stop_reason: StopReason | None  #: why it ended (None while running)
    error: ErrorRecord | None  #: the categorised failure, None if none
    reward: float | None  #: the rubric's score; None when unscored or errored
    metrics: dict[str, float | None]  #: each reward function's value (None: it failed)
    advantage: float | None  #: reward minus the group mean; None when unscored
    usage: Usage  #: tokens reported by the model server
    #: what its model calls cost in US dollars (:mod:`verifiers_lite.core.pricing`); None when
    #: the model is unpriced
    cost_usd: float | None
    timing: Timing  #: where the time went
    prompt_ids: list[int]  #: see :class:`TokenFields` (only when the backend gave token ids)
    completion_ids: list[int]  #: see :class:`TokenFields`
    completion_mask: list[int]  #: see :class:`TokenFields`
    completion_logprobs: list[float]  #: see :class:`TokenFields`
    judge: dict[str, Any]  #: a judge rubric's raw answer and parsed score
    seed: int  #: the rollout's sampling seed, when seeded
    system_fingerprints: list[str]  #: distinct ``system_fingerprint`` values the server returned
    #: distinct ids of the models that answered, when one differs from ``model`` (the one asked)
    served_models: list[str]
    #: per reward function that gave one (``vf.Score(value, explanation)``): why it scored so
    explanations: dict[str, str]


class State(RolloutFields, total=False):
    """The mutable workbench of one rollout; environments may add keys of their own."""

    model: str  #: the model name it was run against
    sampling_args: dict[str, Any]  #: sampling parameters sent with each model call
    tool_defs: list[dict[str, Any]] | None  #: OpenAI tool schemas offered to the model
    retries: int  #: reruns of a failed rollout before it was given up
    last_call_tokens: int  #: the last model call's prompt and completion tokens
    limit_reached: str  #: the per-rollout limit the last model call reached, if any


class Row(RolloutFields, total=False):
    """One finished rollout as stored and exported: the keys ``columns.ROW_KEYS``, plus token ids, ``judge``,
    ``seed``, ``attempts``, the ``session`` that made it, where it ran (``endpoint``, ``worker``)
    and what a re-score needs of
    its State (``finish_reasons`` or ``trajectory`` — the model turns when they are not the
    completion's replies —, ``env_state``) when present. Rows read from an older file may lack
    the newer optional keys; readers use ``row.get``."""

    attempts: int  #: how often the rollout was run (a resume reruns failed ones)
    session: int  #: the session that made it: its index in ``metadata["sessions"]`` (a resume is a session)
    input_hash: str  #: hash of the example's input: a resume refuses rows made from other inputs
    endpoint: str  #: the model endpoint that served it, when there were several
    worker: str  #: the executor worker that ran it, when not in process
    finish_reasons: list[str | None]  #: per model turn, when the turns are the completion's replies
    env_state: dict[str, Any]  #: JSON values the environment put on the State under keys of its own


class FailedToolCall(TypedDict):
    """A tool call of the token engine that failed (its answer to the model says so too)."""

    turn: int  #: the model turn that made the call
    tool_call_id: str  #: the call's id
    name: str | None  #: the tool's name, as the model wrote it
    error: str  #: what went wrong
    #: where the tool's own code raised (the author's frames, as an error's ``traceback``)
    traceback: NotRequired[str]
    #: the key a saved run stores that text under once, as an error's ``traceback_id``
    traceback_id: NotRequired[str]


class Trajectory(TypedDict, total=False):
    """A token-engine rollout (``MultiTurnRollout``, ``APIMultiTurnRollout``): its input's keys
    (``messages``, optionally ``tools``, anything else kept as given) and what the run added.
    ``MultiTurnRollout`` lays its token ids out as a row does (:class:`TokenFields`), its only
    stored layout: ``build_training_batch`` (many) and ``training_view`` (one) derive the training
    fields from trajectories and rows alike; the chat-API engine has no ids."""

    messages: Required[list[dict[str, Any]]]  #: the conversation, with the model's turns appended
    tools: list[dict[str, Any]]  #: OpenAI tool schemas offered (when no ToolManager gives them)
    turns: int  #: model calls made
    stop_reason: StopReason  #: why it ended
    truncated: bool  #: a limit cut it short (:func:`is_truncated`)
    tool_errors: list[FailedToolCall]  #: failed tool calls (the trajectory goes on)
    error: ErrorRecord | None  #: why it failed (a categorised record), None if it did not
    prompt_ids: list[int]  #: see :class:`TokenFields` (``MultiTurnRollout`` only)
    completion_ids: list[int]  #: see :class:`TokenFields`
    completion_mask: list[int]  #: see :class:`TokenFields`
    completion_logprobs: list[float]  #: see :class:`TokenFields`
    #: tokens of the first prompt (also of one refused as too long; 0 unrendered)
    prompt_length: int
