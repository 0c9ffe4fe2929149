"""Errors raised by :class:`RolloutClient`, the client side of the rollout server."""

from __future__ import annotations

from verifiers_lite._util.errors import VerifiersError


class RolloutAdmissionTimeoutError(VerifiersError, TimeoutError):
    """Admission did not finish within ``admission_timeout_sec``.

    ``may_have_been_admitted`` is True when the deadline hit during an HTTP request: the server
    may have accepted the rollout even though no answer arrived.
    """

    def __init__(self, message: str, *, rollout_id: str, may_have_been_admitted: bool) -> None:
        super().__init__(message)
        self.rollout_id = rollout_id
        self.may_have_been_admitted = may_have_been_admitted


class RolloutProtocolError(VerifiersError, RuntimeError):
    """The server answered with an unexpected status code or an invalid payload."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
