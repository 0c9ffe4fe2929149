"""What a run's results are to the modules that read them (export, HTML): rows and metadata.

:class:`~verifiers_lite.results.outputs.GenerateOutputs` is one; typing against this protocol
keeps those modules below it (``GenerateOutputs`` calls them, they never import it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from verifiers_lite.core.records import Row
from verifiers_lite.results.run_metadata import RunMetadata


@runtime_checkable
class RunData(Protocol):
    """A run's rows (in memory or on disk) and its metadata."""

    @property
    def rows(self) -> Sequence[Row]: ...

    @property
    def metadata(self) -> RunMetadata: ...


class SummarizedRun(RunData, Protocol):
    """A run's results with their summary (reward mean and spread, pass@k, error counts)."""

    @property
    def summary(self) -> dict[str, Any]: ...
