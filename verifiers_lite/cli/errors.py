"""The command line's one error type."""

from verifiers_lite._util.errors import VerifiersError


class CLIError(VerifiersError):
    """A user mistake: printed as ``error: ...`` and exit code 2 (no traceback)."""
