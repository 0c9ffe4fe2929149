"""The ``vf-lite`` command line: ``main`` (the console script) and its subcommands, one module
each beside the parser."""

from verifiers_lite.cli.commands import main

__all__ = ["main"]
