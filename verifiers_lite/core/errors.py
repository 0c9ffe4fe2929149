"""The library's exceptions, one tree under :class:`VerifiersError`, and the error categories a
failed rollout records.

``except vf.VerifiersError`` catches every error the library raises of its own. Where callers
catch a builtin (``ValueError`` for bad input, ``TimeoutError``, ``KeyError``, ``RuntimeError``,
``ImportError``), the class keeps that base beside it, shown after the name. A failing rollout
never raises: its exception becomes a row's ``error`` (:func:`categorize`), so most of these
reach a user only as a category on a row. **Yours** marks the ones that mean the caller's
input or setup is wrong (fix the call); the others are the model, a server, the machine or the
library's own plumbing.

::

    VerifiersError
    ├── bad input — yours, raised before any work starts
    │   ├── ContentNotSupportedError (ValueError)   an image for a text-only model
    │   ├── ResumeMismatchError (ValueError)        results_path holds another run
    │   ├── RunFormatError (ValueError)             a run directory written in a newer format
    │   ├── ExamplesMismatchError (ValueError)      compared runs hold other inputs under one id
    │   ├── TrainingDataError (ValueError)          rows a trainer format cannot take
    │   ├── UndefinedStatistic (ValueError)         a statistic of too few examples
    │   ├── ScriptExhaustedError (ValueError)       a ScriptedClient's script ran out
    │   ├── MissingDependencyError (ImportError)    an optional extra is not installed
    │   ├── UnsupportedInspectTask (ValueError)     an inspect_ai task uses what is not run here
    │   └── CLIError                                a vf-lite command line mistake (exit 2)
    ├── in a rollout — recorded on its row as a category, never raised to the run
    │   ├── ModelAPIError                           a model request failed (category model_*)
    │   ├── RolloutTimeoutError (TimeoutError)      the rollout outlived rollout_timeout
    │   ├── RewardFunctionError                     a reward function raised (rubric_error)
    │   ├── ToolServerError                         an MCP tool server died (env_error)
    │   ├── ToolCallFailed                          a tool call failed: the model is told why
    │   ├── ProgramError (RuntimeError)             a program environment's program failed
    │   └── LimitReached                            a per-rollout limit: ends it (its stop reason)
    ├── the machine and servers
    │   ├── LocalModelError (RuntimeError)          the embedded model's server failed
    │   ├── SandboxUnavailableError (RuntimeError)  no sandbox on this machine
    │   ├── SandboxProcessError (RuntimeError)      the sandbox worker failed
    │   │   └── SandboxTimeout                      its code outlived the limit
    │   ├── WorkerStartError (RuntimeError)         a Ray worker did not start
    │   ├── RolloutAdmissionTimeoutError (TimeoutError)  a rollout server never took a rollout
    │   └── RolloutProtocolError (RuntimeError)     a rollout server answered off protocol
    ├── the rollout server's own (answered as HTTP statuses, not raised to users)
    │   ├── RolloutFailure                          a rollout failed on the server
    │   ├── BackendFullError                        429: no room for another rollout
    │   ├── DuplicateRolloutError (KeyError)        409: that rollout id is taken
    │   └── RegistryClosedError (RuntimeError)      503: shutting down
    │       └── NotAcceptingError
    ├── plumbing (caught inside the library)
    │   ├── SingleRoute                             the batched route cannot take a rollout
    │   ├── CallRefused                             a program's model call answered with an error
    │   └── StaleRowsError (RuntimeError)           results.jsonl was replaced under its row index
    └── classic ``verifiers`` environments' own (``vf.Error`` and below, as verifiers 0.3.1)
        └── Error
            ├── ModelError > InvalidModelResponseError > EmptyModelResponseError
            ├── OverlongPromptError
            ├── ToolError > ToolParseError, ToolCallError
            ├── InfraError > SandboxError
            └── ClassicUnsupportedError (NotImplementedError)   yours: a feature not run here
        MissingKeyError (ValueError)                yours: a classic parser's missing key

One exception is not a ``VerifiersError``: ``RunInterrupted`` (``_util/interrupt.py``) is a
``KeyboardInterrupt`` — an interrupt, which ``except Exception`` must not swallow.
"""

from __future__ import annotations

import asyncio

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.core import records
from verifiers_lite.core.records import ErrorCategory, ErrorRecord
from verifiers_lite.core.tracebacks import traceback_key, user_traceback

__all__ = [
    "ERROR_CATEGORIES",
    "ModelAPIError",
    "ResumeMismatchError",
    "RunFormatError",
    "RewardFunctionError",
    "RolloutTimeoutError",
    "ToolServerError",
    "VerifiersError",
    "categorize",
    "cleanup_error",
]

# Every failed rollout row carries exactly one of these in ``error["category"]`` (the closed set
# is defined, one category per line, beside the row it is part of).
ERROR_CATEGORIES = records.ERROR_CATEGORIES


class ModelAPIError(VerifiersError):
    """A model request failed; ``category`` is one of :data:`ERROR_CATEGORIES`.

    Args:
        message: what failed, as the user reads it.
        category: why the rollout failed, one of :data:`ERROR_CATEGORIES`.
        status: the HTTP status of the answer, when there was one.
        retryable: whether the request may succeed if sent again.
        retry_after: seconds the server asked to wait before another request.
        endpoint: the endpoint's URL.
    """

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


class RunFormatError(VerifiersError, ValueError):
    """A run directory's ``metadata.json`` is of a format version this library cannot read (a
    newer release wrote it)."""


def cleanup_error(owner: str, exc: BaseException) -> ErrorRecord:
    """The error recorded on a rollout whose rubric cleanup (``owner``'s) raised: ``env_error``."""
    err = categorize(exc)
    err["category"] = "env_error"
    err["message"] = f"{owner}.cleanup raised {err['message']}"
    return err


def categorize(exc: BaseException) -> ErrorRecord:
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
    for note in getattr(exc, "__notes__", None) or ():  # what the raiser added (add_note)
        message += f" -- {note}"
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
    error: ErrorRecord = {"category": category, "message": message[:2000]}
    if category != "cancelled":
        add_traceback(error, exc)
    return error


def add_traceback(error: ErrorRecord, exc: BaseException) -> None:
    """Keep where the author's code raised ``exc`` on ``error`` (text and key), when it did."""
    text = user_traceback(exc)
    if text is not None:
        error["traceback"], error["traceback_id"] = text, traceback_key(text)
