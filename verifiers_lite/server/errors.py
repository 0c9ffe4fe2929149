"""Errors raised by the rollout server and :class:`RolloutClient`."""

from __future__ import annotations

from typing import Any

from ..extras import missing_dependency


class RolloutAdmissionTimeoutError(TimeoutError):
    """Admission did not finish within ``admission_timeout_sec``.

    ``may_have_been_admitted`` is True when the deadline hit during an HTTP request: the server
    may have accepted the rollout even though no answer arrived.
    """

    def __init__(self, message: str, *, rollout_id: str, may_have_been_admitted: bool) -> None:
        super().__init__(message)
        self.rollout_id = rollout_id
        self.may_have_been_admitted = may_have_been_admitted


class RolloutProtocolError(RuntimeError):
    """The server answered with an unexpected status code or an invalid payload."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class RolloutFailure(Exception):
    """Raised by a backend to publish a failure result with a category.

    ``sample`` is the row produced before the failure (e.g. the rollout ran but its grader timed
    out): it is returned with the failure, marked ``remove_sample`` and without a reward.
    """

    def __init__(self, category: str, message: str, *, sample: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.category = category
        self.message = message
        self.sample = sample


def missing_server_dependency(exc: ImportError) -> ImportError:
    """An ImportError that tells the user which extra to install."""
    err = missing_dependency("the rollout server", "fastapi, uvicorn and httpx", "server", cause=exc)
    err.__cause__ = exc
    return err
