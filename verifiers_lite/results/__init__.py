"""A run's results: the outputs a run returns and ``load_results`` reads back, the store
(results.jsonl and its metadata), the rows on disk, summary figures and paired comparison.

``vf.compare`` and ``vf.rescore`` are the package root's (their modules here share their names).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

# The public names are the imports of the TYPE_CHECKING block below, each imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.results.disk_rows import DiskRows
    from verifiers_lite.results.export import read_run
    from verifiers_lite.results.outputs import GenerateOutputs, load_results
    from verifiers_lite.results.paired import (
        ExamplesMismatchError,
        RunComparison,
        compare_runs,
        examples_needed,
    )
    from verifiers_lite.results.row_index import RowIndex, StaleRowsError
    from verifiers_lite.results.run_data import RunData
    from verifiers_lite.results.run_metadata import RunMetadata, read_run_metadata
    from verifiers_lite.results.store import ResultsStore, iter_rows, read_rows
