"""The command line's one error type."""


class CLIError(Exception):
    """A user mistake: printed as ``error: ...`` and exit code 2 (no traceback)."""
