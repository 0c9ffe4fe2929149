"""A row as flat table columns (metrics, timing and usage expanded): what DataFrames and
Parquet files hold. The columns and their order are :data:`verifiers_lite.core.columns.COLUMNS`'."""

from __future__ import annotations

from typing import Any

from verifiers_lite.core import columns
from verifiers_lite.core.records import Row


def flatten_row(row: Row) -> dict[str, Any]:
    """A row as flat DataFrame columns (metrics, timing and usage expanded; ``completion_text``
    is the final assistant message's text, ``reasoning_text`` the reasoning of its assistant
    turns (None when none reasoned); ``attempts`` how often the rollout was run)."""
    return columns.flat_values(row)


def frame_columns() -> tuple[str, ...]:
    """The columns of an empty run's DataFrame."""
    return columns.current().frame_columns
