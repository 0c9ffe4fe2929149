"""Error categories recorded on failed rollouts, and the exceptions that carry them."""

from __future__ import annotations

import asyncio

from verifiers_lite.core import records
from verifiers_lite.core.records import ErrorCategory, RolloutError

# Every failed rollout row carries exactly one of these in ``error["category"]`` (the closed set
# is defined, one category per line, beside the row it is part of).
ERROR_CATEGORIES = records.ERROR_CATEGORIES


class VerifiersError(Exception):
    """Base class of the library's own exceptions."""


class ModelAPIError(VerifiersError):
    """A model request failed; ``category`` is one of :data:`ERROR_CATEGORIES`."""

    def __init__(
        self,
        message: str,
        *,
        category: ErrorCategory = "model_http_error",
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        endpoint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.category = category
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.endpoint = endpoint


class RolloutTimeoutError(VerifiersError, TimeoutError):
    """A rollout ran longer than its environment's ``rollout_timeout``."""

    category: ErrorCategory = "rollout_timeout"


class ToolServerError(VerifiersError):
    """A tool server (an MCP server) could not be started or stopped answering mid-call (it
    exited, crashed, closed its connection). The rollout cannot go on: its row is recorded
    with category ``env_error`` and the message naming the server."""

    category: ErrorCategory = "env_error"


class RewardFunctionError(VerifiersError):
    """A reward function raised; the rollout is recorded with category ``rubric_error``."""


class ResumeMismatchError(VerifiersError, ValueError):
    """``results_path`` holds a run of another env/model/rollouts_per_example."""


def cleanup_error(owner: str, exc: BaseException) -> RolloutError:
    """The error recorded on a rollout whose rubric cleanup (``owner``'s) raised: ``env_error``."""
    err = categorize(exc)
    err["category"] = "env_error"
    err["message"] = f"{owner}.cleanup raised {err['message']}"
    return err


def categorize(exc: BaseException) -> RolloutError:
    """Turn any exception into the ``{"category", "message"}`` record stored on a row."""
    category: ErrorCategory
    if isinstance(exc, (ModelAPIError, RolloutTimeoutError)):
        category = exc.category
    elif isinstance(exc, RewardFunctionError):
        category = "rubric_error"
    elif isinstance(exc, asyncio.CancelledError):
        category = "cancelled"
    else:
        # A bare TimeoutError here was raised by environment code: model-call timeouts arrive
        # as ModelAPIError (clients and get_model_response wrap them).
        category = getattr(exc, "category", None) or "env_error"
    text = str(exc)
    message = (
        f"{type(exc).__name__}: {text}"
        if text
        else f"{type(exc).__name__} (raised without a message)"
    )
    if (
        isinstance(exc, AttributeError)
        and exc.name == "completions"
        and callable(getattr(exc, "obj", None))
    ):
        message += (
            " -- rollout() gets a verifiers_lite model client, not an OpenAI client: instead of "
            "client.chat.completions.create(...), call "
            "`await self.get_model_response(client, model, messages, state)`"
        )
    return {"category": category, "message": message[:2000]}
