"""A run's DataFrame built one row at a time: scalar columns go through Arrow in chunks.

Rows are flattened and read one by one (they may come from disk); a column of numbers, strings
or booleans is kept as Arrow arrays of a few thousand values each, so a million rows hold about
8 bytes per cell instead of a Python object; a column with nested or mixed values (messages,
info) keeps Python objects, as pandas would. Types come out as ``pandas.DataFrame(records)``
gives them: integers with a gap become floats with NaN, booleans with a gap objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from verifiers_lite.core.records import Row
from verifiers_lite.results.flat_rows import flatten_row, frame_columns

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

CHUNK = 8192


class _Column:
    """One column: Arrow chunks while every chunk is a flat type, else Python objects."""

    def __init__(self, before: int = 0) -> None:
        """A column first seen after ``before`` rows: those rows have no value."""
        import pyarrow as pa

        self.flushed = before - before % CHUNK
        self.chunks: list[pa.Array] | None = [pa.nulls(self.flushed)] if self.flushed else []
        self.objects: list[Any] = []
        self.values: list[Any] = [None] * (before % CHUNK)

    def flush(self) -> None:
        self.flushed += len(self.values)
        if self.chunks is None or not self.values:
            self.objects.extend(self.values)
            self.values = []
            return
        import pyarrow as pa

        try:
            arr = pa.array(self.values, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            arr = None
        if arr is None or not _flat(arr.type):
            self._to_objects()
        else:
            self.chunks.append(arr)
            self.values = []

    def _to_objects(self) -> None:
        self.objects = [v for c in self.chunks or [] for v in c.to_pylist()] + self.values
        self.chunks, self.values = None, []

    def finish(self) -> Any:
        """A pandas Series or a list of Python objects."""
        self.flush()
        if self.chunks is None:
            return self.objects
        import pyarrow as pa

        kinds = {c.type for c in self.chunks} - {pa.null()}
        if kinds == {pa.int64(), pa.float64()}:
            kinds = {pa.float64()}  # integers beside floats: floats, as pandas makes them
        if len(kinds) > 1:
            self._to_objects()
            return self.objects
        kind = kinds.pop() if kinds else pa.null()
        return pa.chunked_array([c.cast(kind) for c in self.chunks], type=kind).to_pandas()


def _flat(kind: pa.DataType) -> bool:
    import pyarrow as pa

    return bool(
        pa.types.is_null(kind)
        or pa.types.is_boolean(kind)
        or pa.types.is_int64(kind)
        or pa.types.is_float64(kind)
        or pa.types.is_string(kind)
    )


def rows_frame(rows: Iterable[Row], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The DataFrame of ``GenerateOutputs.to_pandas``: columns in first-seen order over every
    flattened row (a metric may first appear late), missing cells empty; with ``columns``, only
    those (an unknown one is a column of None)."""
    import pandas as pd

    wanted = None if columns is None else list(dict.fromkeys(columns))
    cols: dict[str, _Column] = {c: _Column() for c in wanted or ()}
    n = 0
    for row in rows:
        flat = flatten_row(row)
        for k in flat if wanted is None else wanted:
            col = cols.get(k)
            if col is None:
                col = cols[k] = _Column(n)
            col.values.append(flat.get(k))
        n += 1
        for col in cols.values():
            if col.flushed + len(col.values) < n:  # this row lacks the column
                col.values.append(None)
        if n % CHUNK == 0:
            for col in cols.values():
                col.flush()
    if not n and wanted is None:
        return pd.DataFrame(columns=frame_columns())
    data = {k: col.finish() for k, col in cols.items()}
    return pd.DataFrame(data, columns=list(data), index=pd.RangeIndex(n))
