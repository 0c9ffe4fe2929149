"""The root of the library's exceptions (drawn, with the whole tree, in ``core/errors.py``).

It lives at the bottom layer so that every package, the statistics and the private helpers
included, can derive from it; users reach it as ``vf.VerifiersError``."""

from __future__ import annotations


class VerifiersError(Exception):
    """Base class of the library's own exceptions: ``except vf.VerifiersError`` catches every
    error the library raises of its own (not a bug's ``TypeError`` or ``KeyError``)."""

    __module__ = "verifiers_lite.core.errors"  # where it is documented and exported
