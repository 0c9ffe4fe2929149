"""Errors raised by the rollout server and its backends."""

from __future__ import annotations

from typing import Any

from ..extras import missing_dependency


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
