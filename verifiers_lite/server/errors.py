"""Errors raised by the rollout server and its backends."""

from __future__ import annotations

from typing import Any

from verifiers_lite._util.errors import VerifiersError


class RolloutFailure(VerifiersError):
    """Raised by a backend to publish a failure result with a category.

    ``sample`` is the row produced before the failure (e.g. the rollout ran but its grader timed
    out): it is returned with the failure, marked ``remove_sample`` and without a reward.
    """

    def __init__(
        self, category: str, message: str, *, sample: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.category = category
        self.message = message
        self.sample = sample
