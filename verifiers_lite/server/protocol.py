"""Wire types of the rollout server (pydantic models): the one module both the server (``server/``)
and its client (``remote/``) import, so neither imports the other for them."""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

LEASE_HEADER = "X-Osmosis-Rollout-Lease"
DEFAULT_RESULT_WAIT_TIMEOUT_SEC = 30.0
DEFAULT_POLLING_LEASE_TIMEOUT_SEC = 120.0
DEFAULT_RESULT_RETENTION_SEC = 900.0
_NOT_IN_ID = frozenset("/\\?#%")  # characters that would split or end a URL path segment


class RolloutStatus(StrEnum):
    """Lifecycle of one rollout: queued -> running -> grading -> success | failure | cancelled."""

    QUEUED = "queued"
    RUNNING = "running"
    GRADING = "grading"
    SUCCESS = "success"
    FAILURE = "failure"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in (RolloutStatus.SUCCESS, RolloutStatus.FAILURE, RolloutStatus.CANCELLED)

    @property
    def rank(self) -> int:
        """Order of stages; every terminal status ranks above grading."""
        return {"queued": 0, "running": 1, "grading": 2}.get(self.value, 3)


class WireErrorCategory(StrEnum):
    """Why a rollout failed, as the wire names it (coarser than a row's ``ErrorCategory``,
    :data:`verifiers_lite.core.records.ERROR_CATEGORIES`; :data:`WIRE_CATEGORY` maps one to the other)."""

    TIMEOUT = "timeout"
    LEASE_EXPIRED = "lease_expired"
    VALIDATION_ERROR = "validation_error"
    HTTP_ERROR = "http_error"
    AGENT_ERROR = "agent_error"
    INTERNAL_ERROR = "internal_error"


#: The one table between the library's error categories (``errors.ERROR_CATEGORIES``, the
#: categories of a row) and the wire's (the names of the external rollout protocol): each core
#: category as a server reports it. The server keeps the core category at the head of
#: ``err_message`` (``"model_timeout: ..."``), so a client can read it back exactly.
WIRE_CATEGORY: dict[str, WireErrorCategory] = {
    "model_http_error": WireErrorCategory.HTTP_ERROR,
    "model_rate_limited": WireErrorCategory.HTTP_ERROR,
    "model_timeout": WireErrorCategory.TIMEOUT,
    "model_connection": WireErrorCategory.HTTP_ERROR,
    "model_crashed": WireErrorCategory.HTTP_ERROR,
    "model_bad_response": WireErrorCategory.HTTP_ERROR,
    "env_error": WireErrorCategory.AGENT_ERROR,
    "rollout_timeout": WireErrorCategory.TIMEOUT,
    "rubric_error": WireErrorCategory.AGENT_ERROR,
    "cancelled": WireErrorCategory.INTERNAL_ERROR,  # a rollout cancelled by the server's own doing
    "remote_error": WireErrorCategory.INTERNAL_ERROR,
    "prompt_too_long": WireErrorCategory.VALIDATION_ERROR,  # the request's prompt does not fit
}

#: What a client records for a wire category when the message names no core category: the
#: server's own failures (lease, validation, a backend bug) are ``remote_error``.
CORE_CATEGORY: dict[WireErrorCategory, str] = {
    WireErrorCategory.TIMEOUT: "rollout_timeout",
    WireErrorCategory.LEASE_EXPIRED: "remote_error",
    WireErrorCategory.VALIDATION_ERROR: "remote_error",
    WireErrorCategory.HTTP_ERROR: "model_http_error",
    WireErrorCategory.AGENT_ERROR: "env_error",
    WireErrorCategory.INTERNAL_ERROR: "remote_error",
}


def wire_category(category: str) -> WireErrorCategory:
    """The wire category of a row's error category (a wire name stays itself; a category
    outside both sets, e.g. an environment's own, is the agent's failure)."""
    if category in WireErrorCategory.__members__.values():
        return WireErrorCategory(category)
    return WIRE_CATEGORY.get(category, WireErrorCategory.AGENT_ERROR)


def core_category(wire: str | None, message: str | None) -> str:
    """The error category a client records for a failed result: the core category named at the
    head of ``message`` when the table maps it to ``wire``, else the table's default for
    ``wire`` (``remote_error`` for a category the table does not know)."""
    if wire is None or wire not in WireErrorCategory.__members__.values():
        return "remote_error"
    head = (message or "").split(":", 1)[0].strip()
    if WIRE_CATEGORY.get(head) == wire:
        return head
    return CORE_CATEGORY[WireErrorCategory(wire)]


CancelDisposition = Literal["cancelled_queued", "cancelled_running", "not_found"]


def _check_timeout(value: float | None) -> float | None:
    if value is not None and (not math.isfinite(value) or value <= 0):
        raise ValueError("timeouts must be finite and positive")
    return value


class RolloutRequest(BaseModel):
    """Body of ``POST /rollout``. Every optional field may also be sent as ``null`` (what
    osmosis-ai's client does); any field not named here is refused (422).

    ``extra_fields`` is free-form data for the rollout: the local backend hands it to the
    environment as ``info["extra_fields"]``.
    """

    model_config = ConfigDict(extra="forbid")

    initial_messages: list[dict[str, Any]]
    rollout_id: str = Field(min_length=1, max_length=256)
    chat_completions_url: str = Field(min_length=1)
    llm_api_key: str | None = None
    label: str | None = None
    metadata: dict[str, Any] | None = None
    grade: bool = True
    agent_timeout_sec: float | None = None
    grader_timeout_sec: float | None = None
    extra_fields: dict[str, Any] | None = None

    @field_validator("rollout_id")
    @classmethod
    def _one_path_segment(cls, value: str) -> str:
        # The id is used in URLs and artifact file names: one plain segment, nothing else.
        if value in (".", "..") or not _NOT_IN_ID.isdisjoint(value) or not value.isprintable():
            raise ValueError("rollout_id must be a single URL path segment")
        if value != value.strip():
            raise ValueError("rollout_id must not start or end with whitespace")
        return value

    @field_validator("llm_api_key")
    @classmethod
    def _non_empty_key(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("llm_api_key must be omitted or non-empty")
        return value

    @field_validator("agent_timeout_sec", "grader_timeout_sec")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        return _check_timeout(value)


class RolloutAccepted(BaseModel):
    """202 answer of ``POST /rollout``."""

    rollout_id: str
    status: RolloutStatus = RolloutStatus.QUEUED
    polling_lease_token: str
    result_wait_timeout_sec: float
    polling_lease_timeout_sec: float


class RolloutSample(BaseModel):
    """The output row of a finished rollout: a :class:`verifiers_lite.core.records.Row` (its keys as
    they are; the fields declared here are the Row's that the wire gives a meaning or a default)
    plus ``remove_sample``.

    ``reward`` is set only on a kept, graded sample of a successful rollout: it is ``None`` when
    grading was skipped (``grade=false``) or did not finish, and on every failed or cancelled
    rollout. ``remove_sample`` marks a sample that must not be trained or scored on (every
    failure's sample, or one the grader removed); the sample itself is still returned.
    """

    model_config = ConfigDict(extra="allow")

    reward: float | None = None
    remove_sample: bool = False
    metrics: dict[str, Any] = Field(default_factory=dict)
    completion: Any = None
    error: dict[str, Any] | None = None


class RolloutResultResponse(BaseModel):
    """Answer of ``GET /rollout/{id}/result``: the latest status, and the result once terminal."""

    rollout_id: str
    status: RolloutStatus
    sample: RolloutSample | None = None
    err_message: str | None = None
    err_category: WireErrorCategory | None = None

    @property
    def terminal(self) -> bool:
        return self.status.terminal


class CancelRequest(BaseModel):
    """Body of ``POST /rollout/cancel``: exactly one of ids, prefix, all=true (``all: false``
    beside ids or a prefix, as osmosis-ai's client sends it, selects nothing more)."""

    model_config = ConfigDict(extra="forbid")

    ids: list[str] | None = None
    prefix: str | None = Field(default=None, min_length=1)
    all: bool | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> CancelRequest:
        chosen = [self.ids is not None, self.prefix is not None, bool(self.all)]
        if sum(chosen) != 1:
            raise ValueError("give exactly one of ids, prefix or all=true")
        return self


class CancelResponse(BaseModel):
    """Per-id dispositions of a cancel request."""

    dispositions: dict[str, CancelDisposition]


def __getattr__(name: str) -> object:
    # The wire's categories were called ErrorCategory, the name of a row's categories too.
    if name == "ErrorCategory":
        import warnings

        warnings.warn(
            "the wire's ErrorCategory is now WireErrorCategory (verifiers_lite.ErrorCategory is "
            "a row's)",
            DeprecationWarning,
            stacklevel=2,
        )
        return WireErrorCategory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
