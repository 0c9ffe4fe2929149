"""Classic ``verifiers.errors``: the exceptions classic environments raise and catch.

Raised inside a rollout they end it as an error row of verifiers_lite (category ``env_error``),
with the exception's class and message.
"""

from __future__ import annotations

from verifiers_lite._util.errors import VerifiersError


class Error(VerifiersError):
    """Base of the classic errors."""


class ModelError(Error):
    """The model's answer could not be used."""


class InvalidModelResponseError(ModelError):
    """The model's answer was malformed."""


class EmptyModelResponseError(InvalidModelResponseError):
    """The model answered nothing."""


class OverlongPromptError(Error):
    """The prompt was too long for the model."""


class ToolError(Error):
    """A tool call failed."""


class ToolParseError(ToolError):
    """A tool call's arguments could not be parsed (raised for ``stop_errors``)."""


class ToolCallError(ToolError):
    """A tool raised (raised for ``stop_errors``)."""


class InfraError(Error):
    """Infrastructure failed."""


class SandboxError(InfraError):
    """A sandbox failed."""


class ClassicUnsupportedError(Error, NotImplementedError):
    """A classic feature verifiers_lite cannot run (named in the message)."""
